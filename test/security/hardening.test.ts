// Hardening (issue 45), in-process: numeric settings are bounded where they are accepted and a value
// stored out of range cannot stop other tenants' claims; merge patches refuse unknown and prototype
// keys; headers the transport cannot send are refused; failed credentials are limited per address.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { claim, settle, sql, type Settlement } from "@fairway/store";
import { seedDue, seedTenant } from "../support/seed.ts";
import { ADMIN_TOKEN as ADMIN, createHarness, type Harness } from "./harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.tdb.drop();
});

const errorOf = async (r: Response) => ((await r.json()) as { error: { code: string; message: string } }).error;

describe("finding 1: numeric settings are bounded, and a stored extreme cannot stop the claim", () => {
  test("the API refuses weights and rates outside their bounds with 400, and stores nothing", async () => {
    await h.tenant("bounded");
    const before = await h.counts();
    for (const body of [
      { weight: 5e-324 },
      { weight: 0 },
      { weight: 1001 },
      { ratePerSecond: 5e-324 },
      { ratePerSecond: 100_001 },
      { burst: 0 },
      { maxInFlight: 0 },
      { maxInFlight: 1.5 },
    ]) {
      const r = await h.call("PATCH", "/v1/admin/tenants/bounded", { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(r)).code).toBe("validation_error");
    }
    const created = await h.call("POST", "/v1/admin/tenants", { body: { name: "x", weight: 5e-324 } });
    expect(created.status).toBe(400);
    expect(await h.counts()).toEqual(before);
    // The bounds themselves are accepted.
    const ok = await h.call("PATCH", "/v1/admin/tenants/bounded", {
      body: { weight: 0.01, ratePerSecond: 0.01 },
    });
    expect(ok.status).toBe(200);
    expect((await h.call("PATCH", "/v1/admin/tenants/bounded", { body: { weight: 1000 } })).status).toBe(200);
  });

  test("a weight and rate forced out of range in the database do not fail the claim for everyone", async () => {
    const db = h.db;
    await seedTenant(db, "extreme");
    await seedTenant(db, "bystander");
    await seedDue(db, "extreme", 3, { type: "clamp" });
    const { triggerIds } = await seedDue(db, "bystander", 3, { type: "clamp" });
    await db.execute(sql`UPDATE tenants SET weight = 5e-324, rate_per_second = 5e-324 WHERE id = 'extreme'`);
    await db.execute(sql`UPDATE tenants SET weight = 'Infinity' WHERE id = 'bystander'`);
    const got = await claim(db, { type: "clamp", budget: 10, owner: "t", leaseMs: 60_000 });
    expect(
      got
        .filter((c) => c.tenantId === "bystander")
        .map((c) => c.id)
        .sort(),
    ).toEqual([...triggerIds].sort());
    const done: Settlement[] = got.map((c) => ({
      id: c.id,
      leaseToken: c.leaseToken,
      attempt: c.attempt,
      status: "succeeded",
      startedAt: new Date(),
      durationMs: 5,
      outcome: "success",
    }));
    await settle(db, done);
    // And the next claim still works.
    await db.execute(sql`UPDATE tenants SET weight = 'NaN', rate_per_second = 'NaN' WHERE id = 'extreme'`);
    await claim(db, { type: "clamp", budget: 10, owner: "t", leaseMs: 60_000 });
  });
});

describe("issue 60: a key weight too small to divide by", () => {
  test("the API refuses 5e-324 for a key's weight and the key default, and stores nothing", async () => {
    const t = await h.tenant("tinykeys");
    const before = await h.counts();
    for (const [method, path, body] of [
      ["PUT", "/v1/keys/k1", { weight: 5e-324 }],
      ["PATCH", "/v1/key-defaults", { weight: 5e-324 }],
      ["PUT", "/v1/keys/k1", { weight: 0.001 }],
    ] as const) {
      const r = await h.call(method, path, { token: t.key, body });
      expect(r.status, `${method} ${path}`).toBe(400);
      expect((await errorOf(r)).message).toContain("0.01");
    }
    expect(await h.counts()).toEqual(before);
  });

  test("a key weight forced to 5e-324 in the database does not fail the claim for everyone", async () => {
    const db = h.db;
    await seedTenant(db, "tinykey");
    await seedTenant(db, "keybystander");
    await seedDue(db, "tinykey", 3, { type: "keyclamp", key: "k" });
    await seedDue(db, "tinykey", 3, { type: "keyclamp", key: "d" });
    const { triggerIds } = await seedDue(db, "keybystander", 3, { type: "keyclamp" });
    await db.execute(sql`UPDATE tenants SET key_weight = 5e-324 WHERE id = 'tinykey'`);
    await db.execute(
      sql`UPDATE tenant_keys SET override = '{"weight": 5e-324}'::jsonb WHERE tenant_id = 'tinykey' AND key = 'k'`,
    );
    const got = await claim(db, { type: "keyclamp", budget: 20, owner: "t", leaseMs: 60_000 });
    expect(
      got
        .filter((c) => c.tenantId === "keybystander")
        .map((c) => c.id)
        .sort(),
    ).toEqual([...triggerIds].sort());
    expect(got.filter((c) => c.tenantId === "tinykey").length).toBeGreaterThan(0);
    // Settling charges the key by its weight too, and the next claim still works.
    await settle(
      db,
      got.map((c) => ({
        id: c.id,
        leaseToken: c.leaseToken,
        attempt: c.attempt,
        status: "succeeded",
        startedAt: new Date(),
        durationMs: 5,
        outcome: "success",
      })),
    );
    await claim(db, { type: "keyclamp", budget: 20, owner: "t", leaseMs: 60_000 });
  });
});

describe("issue 60: input a job would lose or could not be reached by", () => {
  test("a target header named __proto__ is refused with 400, not dropped", async () => {
    const t = await h.tenant("protohdr");
    const before = await h.counts();
    const raw = `{"name":"p","schedule":{"delayMs":60000},"target":{"url":"https://example.com/","headers":{"__proto__":"x","x-ok":"1"}}}`;
    const r = await h.call("POST", "/v1/jobs", { token: t.key, raw, headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    const e = await errorOf(r);
    expect(e.code).toBe("validation_error");
    expect(e.message).toContain("__proto__");
    expect(await h.counts()).toEqual(before);
  });

  test('fairness keys "." and ".." are refused at input', async () => {
    const t = await h.tenant("dotkeys");
    const before = await h.counts();
    for (const key of [".", ".."]) {
      const r = await h.call("POST", "/v1/jobs", {
        token: t.key,
        body: { name: "k", key, schedule: { delayMs: 60_000 }, target: { url: "https://example.com/" } },
      });
      expect(r.status, key).toBe(400);
      expect((await errorOf(r)).message, key).toContain("/v1/keys/{key}");
    }
    expect(await h.counts()).toEqual(before);
    // Dots elsewhere in a key are fine.
    const ok = await h.call("POST", "/v1/jobs", {
      token: t.key,
      body: { name: "k", key: "...", schedule: { delayMs: 60_000 }, target: { url: "https://example.com/" } },
    });
    expect(ok.status).toBe(201);
  });
});

describe("finding 3: failed credentials are limited per client address, and the right one always passes", () => {
  const from = (address: string, path: string, init: RequestInit = {}) =>
    Promise.resolve(h.app.request(path, init, { incoming: { socket: { remoteAddress: address } } }));
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

  test("admin token, fw_ keys and the metrics reader: 401 up to the limit, then 429 with Retry-After", async () => {
    const t = await h.tenant("limited");
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await from("10.0.0.1", "/v1/admin/tenants", bearer(`wrong-${i}`))).status);
    for (let i = 0; i < 12; i++)
      statuses.push((await from("10.0.0.1", "/v1/jobs", bearer(`fw_${"x".repeat(43)}`))).status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.slice(20)).toEqual([429, 429, 429, 429]);
    const limited = await from("10.0.0.1", "/metrics", bearer("wrong"));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await errorOf(limited)).code).toBe("too_many_failures");
    // The right credentials from the same address are never refused by the limiter.
    expect((await from("10.0.0.1", "/v1/admin/tenants", bearer(ADMIN))).status).toBe(200);
    expect((await from("10.0.0.1", "/v1/jobs", bearer(t.key))).status).toBe(200);
    // Another address is not affected.
    expect((await from("10.0.0.2", "/v1/admin/tenants", bearer("wrong"))).status).toBe(401);
  });

  test("dashboard sign-in: wrong tokens are limited per address; the right token signs in at once", async () => {
    const login = (address: string, token: string) =>
      from(address, "/dashboard/login", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token }).toString(),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) statuses.push((await login("10.0.1.1", `wrong-${i}`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
    expect((await login("10.0.1.1", ADMIN)).status).toBe(303);
    expect((await login("10.0.1.2", "wrong")).status).toBe(401);
    // Invalid portal links count too.
    for (let i = 0; i < 21; i++) await from("10.0.1.3", `/dashboard/open/not-a-link-${i}`);
    const r = await from("10.0.1.3", "/dashboard/open/not-a-link");
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  test("a bad fw_ key costs no database read: malformed ones never, a repeated one only once", async () => {
    const repeated = `fw_${"r".repeat(43)}`;
    expect((await h.call("GET", "/v1/jobs", { token: repeated })).status).toBe(401);
    await h.db.execute(sql`ALTER TABLE api_keys RENAME TO api_keys_away`);
    try {
      expect((await h.call("GET", "/v1/jobs", { token: repeated })).status).toBe(401);
      expect((await h.call("GET", "/v1/jobs", { token: "fw_short" })).status).toBe(401);
      expect((await h.call("GET", "/v1/admin/tenants", { token: repeated })).status).toBe(401);
      // A new well-shaped key does read (and fails here, the table being away): the check above is real.
      expect((await h.call("GET", "/v1/jobs", { token: `fw_${"n".repeat(43)}` })).status).toBe(500);
    } finally {
      await h.db.execute(sql`ALTER TABLE api_keys_away RENAME TO api_keys`);
    }
  });
});

describe("finding 4: tokens are masked in every logged path", () => {
  test("canary: a portal link and session on non-canonical paths never reach the access log", async () => {
    await h.tenant("canary4");
    const link = (await (await h.call("POST", "/v1/admin/tenants/canary4/portal-link", { body: {} })).json()) as {
      url: string;
    };
    const linkToken = link.url.split("/open/")[1];
    const opened = await h.app.request(`/dashboard/open/${linkToken}`);
    const session = opened.headers.get("location")!.split("/portal/")[1].split("/")[0];
    expect(session.length).toBeGreaterThan(40);
    h.logs.length = 0;
    const paths = [
      `/dashboard//portal/${session}/jobs`,
      `/dashboard/portal//${session}/jobs`,
      `/Dashboard/portal/${session}/jobs`,
      `/dashboard/PORTAL/${session}/jobs`,
      `//dashboard/open/${linkToken}`,
      `/dashboard/open//${linkToken}`,
      `/dashboard/portal/${session.replace(".", "%2E")}/jobs`,
      `/v1/jobs/${session}`,
      `/elsewhere/${linkToken}/x`,
    ];
    for (const p of paths) await h.app.request(p);
    const logged = h.logs.join("\n");
    expect(h.logs.length).toBeGreaterThanOrEqual(paths.length);
    // No 16-character run of either token appears anywhere in the log.
    for (const token of [linkToken, session]) {
      for (let i = 0; i + 16 <= token.length; i += 8) expect(logged).not.toContain(token.slice(i, i + 16));
    }
  });
});

describe("finding 5: merge patch refuses unknown and prototype keys with the create's 400", () => {
  test("tenants, jobs and pools: each key refused by name, nothing changed, never a 500", async () => {
    const t = await h.tenant("patchy");
    const job = await h.call("POST", "/v1/jobs", {
      token: t.key,
      body: { name: "p", schedule: { delayMs: 60_000 }, target: { url: "https://example.com/" } },
    });
    const jobId = ((await job.json()) as { id: string }).id;
    expect(
      (await h.call("PUT", "/v1/admin/pools/patchy-pool", { body: { concurrency: 2, timeoutMs: 1000 } })).status,
    ).toBe(200);
    const targets: Array<[string, string, Record<string, unknown>]> = [
      ["/v1/admin/tenants/patchy", ADMIN, { maxInFlight: 7 }],
      [`/v1/jobs/${jobId}`, t.key, { name: "changed" }],
      ["/v1/admin/pools/patchy-pool", ADMIN, { concurrency: 3 }],
    ];
    for (const [path, token, valid] of targets) {
      const before = await (await h.call("GET", path, { token })).text();
      for (const raw of [
        `{"constructor":1,${JSON.stringify(valid).slice(1)}`,
        `{"prototype":1,${JSON.stringify(valid).slice(1)}`,
        `{"__proto__":{},${JSON.stringify(valid).slice(1)}`,
        '{"__proto__":null}',
        '{"__proto__":1}',
        '{"unknownField":1}',
      ]) {
        const r = await h.call("PATCH", path, { token, raw, headers: { "content-type": "application/json" } });
        expect(r.status, `${path} ${raw}`).toBe(400);
        const e = await errorOf(r);
        expect(e.code).toBe("validation_error");
        const key = /"(constructor|prototype|__proto__|unknownField)"/.exec(raw)![1];
        // __proto__: null is RFC 7396's "remove a field that does not exist": a no-op, yet still named.
        expect(e.message, raw).toContain(`"${key}"`);
      }
      expect(await (await h.call("GET", path, { token })).text()).toBe(before);
    }
    // The same body on create gives the same refusal.
    const created = await h.call("POST", "/v1/admin/tenants", {
      raw: '{"name":"x","constructor":1}',
      headers: { "content-type": "application/json" },
    });
    expect(created.status).toBe(400);
    expect((await errorOf(created)).message).toContain('"constructor"');
    // A free-form payload may still carry such keys as data.
    const withPayload = await h.call("PATCH", `/v1/jobs/${jobId}`, {
      token: t.key,
      raw: '{"payload":{"constructor":1,"__proto__":{"x":1}}}',
      headers: { "content-type": "application/json" },
    });
    expect(withPayload.status).toBe(200);
  });
});

describe("finding 7: headers the transport cannot send are refused at create", () => {
  test("keep-alive, upgrade, expect and the rest: 400 naming the header, nothing stored", async () => {
    const t = await h.tenant("hdrs");
    const before = await h.counts();
    for (const name of [
      "keep-alive",
      "Upgrade",
      "expect",
      "TE",
      "trailer",
      "proxy-connection",
      "connection",
      "transfer-encoding",
      "host",
      "content-length",
      ":path",
      "http2-settings",
    ]) {
      const r = await h.call("POST", "/v1/jobs", {
        token: t.key,
        body: {
          name: "h",
          schedule: { delayMs: 60_000 },
          target: { url: "https://example.com/", headers: { [name]: "x" } },
        },
      });
      expect(r.status, name).toBe(400);
      const e = await errorOf(r);
      expect(e.code).toBe("validation_error");
      expect(e.message, name).toContain(name);
    }
    expect(await h.counts()).toEqual(before);
  });
});

describe("finding 8: portal access is revoked per tenant", () => {
  async function openSession(tenant: string) {
    const link = (await (await h.call("POST", `/v1/admin/tenants/${tenant}/portal-link`, { body: {} })).json()) as {
      url: string;
    };
    const path = `/dashboard/open/${link.url.split("/open/")[1]}`;
    const opened = await h.app.request(path);
    expect(opened.status).toBe(303);
    return { link: path, session: opened.headers.get("location")! };
  }
  const status = async (path: string) => (await h.app.request(path)).status;

  test("revoke, signing-secret rotation and suspension each end links and sessions; others keep theirs", async () => {
    await h.tenant("portal-a");
    await h.tenant("portal-b");
    const other = await openSession("portal-b");

    let s = await openSession("portal-a");
    expect(await status(s.session)).toBe(200);
    const revoked = await h.call("POST", "/v1/admin/tenants/portal-a/portal-sessions/revoke");
    expect(revoked.status).toBe(200);
    expect(await status(s.session)).toBe(403);
    expect(await status(s.link)).toBe(403);

    s = await openSession("portal-a");
    expect((await h.call("POST", "/v1/admin/tenants/portal-a/signing-secret/rotate")).status).toBe(200);
    expect(await status(s.session)).toBe(403);

    s = await openSession("portal-a");
    expect((await h.call("PATCH", "/v1/admin/tenants/portal-a", { body: { status: "suspended" } })).status).toBe(200);
    expect((await h.call("PATCH", "/v1/admin/tenants/portal-a", { body: { status: "active" } })).status).toBe(200);
    expect(await status(s.session)).toBe(403);
    expect(await status(s.link)).toBe(403);

    // A new link works again; the other tenant's session was never touched.
    expect(await status((await openSession("portal-a")).session)).toBe(200);
    expect(await status(other.session)).toBe(200);
    expect((await h.call("POST", "/v1/admin/tenants/nope/portal-sessions/revoke")).status).toBe(404);
  });
});

describe("finding 9 and the user-found bugs", () => {
  test("API answers carry Cache-Control: no-store (new key, signing secret, portal link, errors)", async () => {
    const t = await h.tenant("nostore");
    for (const [method, path] of [
      ["POST", "/v1/admin/tenants/nostore/keys"],
      ["GET", "/v1/admin/tenants/nostore/signing-secret"],
      ["POST", "/v1/admin/tenants/nostore/signing-secret/rotate"],
      ["POST", "/v1/admin/tenants/nostore/portal-link"],
      ["GET", "/v1/admin/tenants/none"],
    ]) {
      const r = await h.call(method, path, method === "POST" ? { body: {} } : {});
      expect(r.headers.get("cache-control"), path).toBe("no-store");
    }
    const created = await h.call("POST", "/v1/admin/tenants", { body: { name: "n" } });
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect((await h.call("GET", "/v1/jobs", { token: t.key })).headers.get("cache-control")).toBe("no-store");
  });

  test("channel URLs must be https (plain http only to a private address when private targets are allowed)", async () => {
    const t = await h.tenant("chan");
    const add = (url: string, app = h) =>
      app.call("POST", "/v1/notification-channels", { token: t.key, body: { type: "webhook", url } });
    const r = await add("http://example.com/hook");
    expect(r.status).toBe(400);
    expect((await errorOf(r)).message).toContain("https");
    expect((await add("https://example.com/hook")).status).toBe(201);
  });

  test("with private targets allowed, plain http still reaches only private hosts, never a public name", async () => {
    const open = await createHarness({ allowPrivateTargets: true });
    try {
      const t = await open.tenant("chan-open");
      const add = (url: string) =>
        open.call("POST", "/v1/notification-channels", { token: t.key, body: { type: "webhook", url } });
      for (const url of ["http://example.com/hook", "http://hooks.example.org:8080/x", "http://8.8.8.8/hook"]) {
        const r = await add(url);
        expect(r.status, url).toBe(400);
        expect((await errorOf(r)).message, url).toContain("public host");
      }
      for (const url of [
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://[::1]:9/hook",
        "http://hooks.internal/x",
      ]) {
        expect((await add(url)).status, url).toBe(201);
      }
    } finally {
      await open.tdb.drop();
    }
  });

  test("GET /v1/dead-letters is newest first, page by page", async () => {
    const t = await h.tenant("dlorder");
    const jobs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await h.call("POST", "/v1/jobs", {
        token: t.key,
        body: {
          name: `d${i}`,
          type: "dl-order",
          schedule: { delayMs: 0 },
          retry: { maxAttempts: 1 },
          target: { url: "https://example.com/" },
        },
      });
      jobs.push(((await r.json()) as { id: string }).id);
    }
    await h.db.execute(
      sql`UPDATE triggers SET next_attempt_at = now() - interval '1 second' WHERE tenant_id = 'dlorder'`,
    );
    const got = await claim(h.db, { type: "dl-order", budget: 10, owner: "t", leaseMs: 60_000 });
    expect(got).toHaveLength(3);
    await settle(
      h.db,
      got.map((c) => ({
        id: c.id,
        leaseToken: c.leaseToken,
        attempt: c.attempt,
        status: "dead" as const,
        reason: "exhausted",
        startedAt: new Date(),
        durationMs: 1,
        outcome: "http_error",
        httpStatus: 503,
      })),
    );
    const all = (await (await h.call("GET", "/v1/dead-letters", { token: t.key })).json()) as {
      data: Array<{ id: string }>;
    };
    const ids = all.data.map((d) => d.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(ids).toHaveLength(3);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await (
        await h.call("GET", `/v1/dead-letters?limit=1${cursor ? `&cursor=${cursor}` : ""}`, { token: t.key })
      ).json()) as { data: Array<{ id: string }>; nextCursor: string | null };
      paged.push(...page.data.map((d) => d.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged).toEqual(ids);
  });

  test("POST /v1/jobs answers nextFires for a cron job, as GET does", async () => {
    const t = await h.tenant("nextfires");
    const r = await h.call("POST", "/v1/jobs", {
      token: t.key,
      body: { name: "c", schedule: { cron: "0 9 * * *" }, target: { url: "https://example.com/" } },
    });
    const created = (await r.json()) as { id: string; nextFires?: string[] };
    const got = (await (await h.call("GET", `/v1/jobs/${created.id}`, { token: t.key })).json()) as {
      nextFires: string[];
    };
    expect(created.nextFires).toHaveLength(5);
    expect(created.nextFires).toEqual(got.nextFires);
  });
});

describe("finding 9: a target that became forbidden is a final failure with the flag hint", () => {
  test("saved while private targets were allowed, run without: forbidden_target, dead at once, never retried", async () => {
    const { runTrigger } = await import("../../packages/executor/src/run-trigger.ts");
    const { RunAbort } = await import("@fairway/executor");
    const { decideRetry } = await import("@fairway/core");
    const { createUndiciTransport } = await import("@fairway/executor/node");
    const transport = createUndiciTransport({ allowPrivate: false });
    try {
      for (const url of ["http://127.0.0.1:9/hook", "http://localhost:9/hook"]) {
        const r = await runTrigger(
          {
            id: "trg_x",
            tenantId: "t",
            jobId: "job_x",
            type: "webhook",
            kind: "schedule",
            scheduledFor: new Date(),
            attempt: 1,
            maxAttempts: 5,
            leaseToken: "l",
            priority: 0,
            jobName: "j",
            target: { url },
            payload: null,
            timeoutMs: 5000,
            initialDelayMs: 1000,
            maxDelayMs: 60_000,
            backoff: "exponential",
            jitter: "none",
            secrets: ["whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q="],
            atCap: false,
          } as never,
          new RunAbort(),
          { transport, handlers: {}, allowPrivateTargets: false, now: Date.now },
        );
        expect(r.outcome, url).toBe("forbidden_target");
        expect(r.error, url).toContain("FAIRWAY_ALLOW_PRIVATE_TARGETS=true");
        const d = decideRetry({
          outcome: r.outcome,
          httpStatus: null,
          retryAfterMs: null,
          attempt: 1,
          policy: { maxAttempts: 5, initialDelayMs: 1000, maxDelayMs: 60_000 },
        } as never);
        expect(d.kind, url).toBe("dead");
      }
    } finally {
      await transport.close();
    }
  });
});
