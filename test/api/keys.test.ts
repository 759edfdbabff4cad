// Fairness keys over real HTTP on real Postgres, with a real executor and receiver: keyed jobs (one-time
// and cron), /v1/keys with running and due under a key cap, overrides put and deleted, the key
// defaults as a JSON Merge Patch, the admin's equivalents, another tenant's keys invisible, and every
// bound refused with its code and nothing written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFetchTransport, Executor } from "@fairway/executor";
import { parsePrometheus } from "../support/prometheus.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";
import { ADMIN, startApi, type ApiHarness } from "./harness.ts";

let h: ApiHarness;
let rx: Receiver;
let acme: string;
let other: string;
beforeAll(async () => {
  h = await startApi();
  rx = await startReceiver();
  acme = await h.tenant("acme");
  other = await h.tenant("other");
});
afterAll(async () => {
  await h?.close();
  await rx?.close();
});

const enc = encodeURIComponent;
const job = (key: string | undefined, over: Record<string, unknown> = {}) => ({
  name: `j-${key ?? "none"}`,
  ...(key === undefined ? {} : { key }),
  schedule: { delayMs: 0 },
  target: { url: `${rx.url}/slow/60000` },
  ...over,
});

describe("keyed jobs and /v1/keys", () => {
  it("a capped key runs one, holds one on standby and shows the rest due; an uncapped key runs all; jobs filter by key", async () => {
    const capped = "k1";
    const open = "k 2/é"; // a space, a slash and a non-ASCII letter: URL-encoded in paths
    expect((await h.call(acme, "PUT", `/v1/keys/${capped}`, { maxInFlight: 1 })).status).toBe(200);
    const ids: Record<string, string[]> = { [capped]: [], [open]: [] };

    // Worker time first: k1 and "k 2/é" one 500 ms run each, twelve more keys one quick run each, so
    // the busiest of these fourteen keys (per-key metrics keep ten) are those two.
    const warm: string[] = [];
    for (const k of [capped, open, ...Array.from({ length: 12 }, (_, i) => `many-${i}`)]) {
      const slow = k === capped || k === open;
      const r = await h.call(
        acme,
        "POST",
        "/v1/jobs",
        job(k, { target: { url: `${rx.url}/${slow ? "slow/500" : "ok"}` } }),
      );
      expect(r.status, r.text).toBe(201);
      warm.push(r.json.id);
      if (slow) ids[k].push(r.json.id);
    }
    const warmer = new Executor({ db: h.db, transport: createFetchTransport(), pollMs: 10, allowPrivateTargets: true });
    warmer.start();
    await until(
      () =>
        Promise.all(
          warm.map(async (id) => (await h.call(acme, "GET", `/v1/jobs/${id}/triggers`)).json.data[0]?.status),
        ),
      (s) => s.every((x) => x === "succeeded"),
      30_000,
      "the warm-up runs settled",
    );
    await warmer.stop(1000);
    for (const k of [capped, capped, capped, open, open]) {
      const r = await h.call(acme, "POST", "/v1/jobs", job(k));
      expect(r.status, r.text).toBe(201);
      expect(r.json.key).toBe(k);
      ids[k].push(r.json.id);
    }
    expect((await h.call(acme, "POST", "/v1/jobs", job(undefined))).json.key).toBeNull();
    const cron = await h.call(acme, "POST", "/v1/jobs", job("cron-key", { schedule: { cron: "0 3 * * *" } }));
    expect(cron.json.key).toBe("cron-key");

    const listed = await h.call(acme, "GET", `/v1/jobs?key=${enc(capped)}`);
    expect(listed.json.data.map((j: any) => j.id).sort()).toEqual([...ids[capped]].sort());
    expect((await h.call(acme, "GET", `/v1/jobs?key=${enc(open)}`)).json.data).toHaveLength(3);
    expect((await h.call(acme, "GET", "/v1/jobs?key=nope")).json.data).toEqual([]);

    const before = await h.call(acme, "GET", `/v1/keys/${capped}`);
    expect(before.json).toMatchObject({ key: capped, running: 0, due: 3, policy: { maxInFlight: 1 } });

    const ex = new Executor({ db: h.db, transport: createFetchTransport(), pollMs: 10, allowPrivateTargets: true });
    try {
      const keyOf = async (k: string) => (await h.call(acme, "GET", `/v1/keys/${enc(k)}`)).json;
      for (let i = 0; i < 5; i++) await ex.tick();
      await until(
        async () => [await keyOf(capped), await keyOf(open)],
        ([a, b]) => a.running === 1 && b.running === 2,
        20_000,
        "k1 running 1, k 2/é running 2",
      );
      for (let i = 0; i < 5; i++) await ex.tick(); // more ticks never run a second k1
      // k1 at its cap holds its next trigger on standby (leased to the executor, not due; store
      // standby.ts): one is left due, and still one running.
      await until(
        () => keyOf(capped),
        (k) => k.due === 1,
        20_000,
        "k1's next trigger on standby",
      );
      const a = await keyOf(capped);
      expect(a).toMatchObject({ running: 1, due: 1, override: { maxInFlight: 1 } });
      expect(a.oldestDueLagMs).toBeGreaterThanOrEqual(0);
      const list = await h.call(acme, "GET", "/v1/keys");
      expect(list.status, list.text).toBe(200);
      const byKey = Object.fromEntries(list.json.data.map((k: any) => [k.key, k]));
      expect(byKey[capped]).toMatchObject({ running: 1, due: 1 });
      expect(byKey[open]).toMatchObject({ running: 2, due: 0, override: null, policy: { maxInFlight: null } });
      // By key, byte for byte.
      const keys = list.json.data.map((k: any) => k.key);
      expect(keys).toEqual([...keys].sort((x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
      // Paging walks the same keys.
      const first = await h.call(acme, "GET", "/v1/keys?limit=1");
      expect(first.json.data).toHaveLength(1);
      expect(first.json.nextCursor).not.toBeNull();
      const second = await h.call(acme, "GET", `/v1/keys?limit=1&cursor=${enc(first.json.nextCursor)}`);
      expect(second.json.data[0].key).toBe(keys[1]);

      // Metrics: per key, the top 10 keys of the tenant by worker time (of fourteen with some).
      const fleet = parsePrometheus((await h.call(ADMIN, "GET", "/metrics")).text);
      const running = fleet.get("fairway_key_running")!.metrics.filter((m) => m.labels?.tenant === "acme");
      expect(running).toHaveLength(10);
      const at = (k: string) => running.find((m) => m.labels?.key === k)?.value;
      expect([at(capped), at(open)]).toEqual(["1", "2"]);
      const cap = fleet.get("fairway_key_max_in_flight")!.metrics.find((m) => m.labels?.key === capped);
      expect(cap?.value).toBe("1");
      const own = parsePrometheus((await h.call(acme, "GET", "/v1/metrics")).text);
      const mine = own.get("fairway_key_due")!.metrics;
      expect(mine).toHaveLength(10);
      expect(mine.find((m) => m.labels?.key === capped)).toEqual({ labels: { key: capped }, value: "1" });
      expect((await h.call(other, "GET", "/v1/metrics")).text).not.toContain(capped);
    } finally {
      await ex.stop(500);
    }
    // A run-now of the cron job carries its key into the trigger.
    const run = await h.call(acme, "POST", `/v1/jobs/${cron.json.id}/run`);
    expect(run.status, run.text).toBe(201);
    expect(run.json.key).toBe("cron-key");
    const triggers = await h.call(acme, "GET", `/v1/jobs/${cron.json.id}/triggers?key=cron-key`);
    expect(triggers.json.data.map((t: any) => t.id)).toEqual([run.json.id]);
  }, 60_000);

  it("PATCH /v1/jobs/:id sets, changes and clears a job's key", async () => {
    const j = (await h.call(acme, "POST", "/v1/jobs", job(undefined, { schedule: { cron: "0 4 * * *" } }))).json;
    expect((await h.call(acme, "PATCH", `/v1/jobs/${j.id}`, { key: "x" })).json.key).toBe("x");
    expect((await h.call(acme, "PATCH", `/v1/jobs/${j.id}`, { name: "renamed" })).json.key).toBe("x");
    expect((await h.call(acme, "GET", `/v1/jobs/${j.id}`)).json.key).toBe("x");
    expect((await h.call(acme, "PATCH", `/v1/jobs/${j.id}`, { key: null })).json.key).toBeNull();
  });
});

describe("policy", () => {
  it("an override over the defaults; DELETE returns the key to them (idempotent)", async () => {
    const k = "policy-key";
    const never = await h.call(acme, "GET", `/v1/keys/${k}`);
    expect(never.json).toEqual({
      key: k,
      override: null,
      policy: { maxInFlight: null, ratePerSecond: null, weight: 1 },
      running: 0,
      due: 0,
      oldestDueLagMs: null,
      workerTimeShare: 0,
    });
    const put = await h.call(acme, "PUT", `/v1/keys/${k}`, { maxInFlight: 2, weight: 3 });
    expect(put.status, put.text).toBe(200);
    expect(put.json).toMatchObject({
      override: { maxInFlight: 2, weight: 3 },
      policy: { maxInFlight: 2, ratePerSecond: null, weight: 3 },
    });

    // Defaults: a merge patch; fields not named keep their value, null returns one to its default.
    expect((await h.call(acme, "PATCH", "/v1/key-defaults", { ratePerSecond: 5, maxInFlight: 10 })).json).toEqual({
      maxInFlight: 10,
      ratePerSecond: 5,
      weight: 1,
    });
    expect((await h.call(acme, "PATCH", "/v1/key-defaults", { weight: 2 })).json).toEqual({
      maxInFlight: 10,
      ratePerSecond: 5,
      weight: 2,
    });
    // The override wins where it speaks; the defaults fill in the rest.
    expect((await h.call(acme, "GET", `/v1/keys/${k}`)).json.policy).toEqual({
      maxInFlight: 2,
      ratePerSecond: 5,
      weight: 3,
    });
    // null in an override: no cap for this key whatever the default.
    const uncapped = await h.call(acme, "PUT", `/v1/keys/${k}`, { maxInFlight: null });
    expect(uncapped.json).toMatchObject({ override: { maxInFlight: null }, policy: { maxInFlight: null, weight: 2 } });

    const del = await h.call(acme, "DELETE", `/v1/keys/${k}`);
    expect(del.status).toBe(200);
    expect(del.json).toMatchObject({ override: null, policy: { maxInFlight: 10, ratePerSecond: 5, weight: 2 } });
    expect((await h.call(acme, "DELETE", `/v1/keys/${k}`)).json).toEqual(del.json);

    expect((await h.call(acme, "PATCH", "/v1/key-defaults", { ratePerSecond: null, weight: null })).json).toEqual({
      maxInFlight: 10,
      ratePerSecond: null,
      weight: 1,
    });
    expect((await h.call(acme, "PATCH", "/v1/key-defaults", { maxInFlight: null })).json).toEqual({
      maxInFlight: null,
      ratePerSecond: null,
      weight: 1,
    });
    expect((await h.call(acme, "GET", "/v1/key-defaults")).json).toEqual({
      maxInFlight: null,
      ratePerSecond: null,
      weight: 1,
    });
  });

  it("the admin has the same under /v1/admin/tenants/:id; another tenant sees none of it", async () => {
    const base = "/v1/admin/tenants/other";
    const put = await h.call(ADMIN, "PUT", `${base}/fairness-keys/${enc("shared name")}`, { weight: 7 });
    expect(put.status, put.text).toBe(200);
    expect(put.json.policy.weight).toBe(7);
    expect((await h.call(ADMIN, "PATCH", `${base}/key-defaults`, { maxInFlight: 4 })).json.maxInFlight).toBe(4);
    expect((await h.call(other, "GET", "/v1/key-defaults")).json.maxInFlight).toBe(4);
    expect((await h.call(other, "GET", `/v1/keys/${enc("shared name")}`)).json.override).toEqual({ weight: 7 });
    expect((await h.call(ADMIN, "GET", `${base}/fairness-keys`)).json).toEqual(
      (await h.call(other, "GET", "/v1/keys")).json,
    );
    expect((await h.call(ADMIN, "GET", `${base}/fairness-keys/${enc("shared name")}`)).json.override).toEqual({
      weight: 7,
    });

    // acme: none of other's overrides or defaults.
    const mine = await h.call(acme, "GET", `/v1/keys/${enc("shared name")}`);
    expect(mine.json.override).toBeNull();
    expect((await h.call(acme, "GET", "/v1/key-defaults")).json.maxInFlight).toBeNull();
    expect((await h.call(acme, "GET", "/v1/keys")).json.data.map((k: any) => k.key)).not.toContain("shared name");
    // other: none of acme's keys with work.
    expect((await h.call(other, "GET", "/v1/keys")).json.data.map((k: any) => k.key)).toEqual(["shared name"]);
    expect((await h.call(other, "GET", "/v1/keys/k1")).json).toMatchObject({ running: 0, due: 0, override: null });
    expect((await h.call(other, "GET", "/v1/jobs?key=k1")).json.data).toEqual([]);

    const del = await h.call(ADMIN, "DELETE", `${base}/fairness-keys/${enc("shared name")}`);
    expect(del.json.override).toBeNull();
    // A tenant key is no admin credential; an unknown tenant is a 404.
    expect((await h.call(other, "GET", `${base}/key-defaults`)).status).toBe(403);
    expect((await h.call(ADMIN, "GET", "/v1/admin/tenants/nope/key-defaults")).json.error.code).toBe("not_found");
    expect((await h.call(ADMIN, "PUT", "/v1/admin/tenants/nope/fairness-keys/a", {})).status).toBe(404);
    // The admin's /keys stay API keys.
    expect((await h.call(ADMIN, "POST", `${base}/keys`)).status).toBe(201);
  });
});

describe("bounds", () => {
  const long = "x".repeat(129);
  const cases: Array<[string, string, string, unknown, string]> = [
    ["PUT", "/v1/keys/b", "maxInFlight 0", { maxInFlight: 0 }, "validation_error"],
    ["PUT", "/v1/keys/b", "maxInFlight over", { maxInFlight: 100_001 }, "validation_error"],
    ["PUT", "/v1/keys/b", "maxInFlight fraction", { maxInFlight: 1.5 }, "validation_error"],
    ["PUT", "/v1/keys/b", "maxInFlight string", { maxInFlight: "2" }, "validation_error"],
    ["PUT", "/v1/keys/b", "rate under", { ratePerSecond: 0.001 }, "validation_error"],
    ["PUT", "/v1/keys/b", "rate over", { ratePerSecond: 100_001 }, "validation_error"],
    ["PUT", "/v1/keys/b", "weight 0", { weight: 0 }, "validation_error"],
    ["PUT", "/v1/keys/b", "weight over", { weight: 1001 }, "validation_error"],
    ["PUT", "/v1/keys/b", "weight null", { weight: null }, "validation_error"],
    ["PUT", "/v1/keys/b", "unknown field", { cap: 1 }, "validation_error"],
    ["PUT", "/v1/keys/b", "an array", [1], "validation_error"],
    ["PUT", "/v1/keys/b", "not JSON", "{", "invalid_json"],
    ["PUT", `/v1/keys/${long}`, "key too long", { weight: 2 }, "invalid_key"],
    ["PUT", "/v1/keys/a%01b", "C0 control in key", { weight: 2 }, "invalid_key"],
    ["PUT", "/v1/keys/a%C2%85b", "C1 control in key", { weight: 2 }, "invalid_key"],
    ["PUT", "/v1/keys/a%7Fb", "DEL in key", { weight: 2 }, "invalid_key"],
    ["PUT", "/v1/keys/a%00b", "NUL in key", { weight: 2 }, "invalid_text"],
    ["DELETE", `/v1/keys/${long}`, "key too long", undefined, "invalid_key"],
    ["GET", `/v1/keys/${long}`, "key too long", undefined, "invalid_key"],
    ["PATCH", "/v1/key-defaults", "maxInFlight 0", { maxInFlight: 0 }, "validation_error"],
    ["PATCH", "/v1/key-defaults", "rate 0", { ratePerSecond: 0 }, "validation_error"],
    ["PATCH", "/v1/key-defaults", "weight under", { weight: 0.001 }, "validation_error"],
    ["PATCH", "/v1/key-defaults", "weight string", { weight: "2" }, "validation_error"],
    ["PATCH", "/v1/key-defaults", "unknown field", { burst: 1 }, "validation_error"],
    ["PATCH", "/v1/key-defaults", "an array", [], "validation_error"],
    ["POST", "/v1/jobs", "empty key", { key: "" }, "validation_error"],
    ["POST", "/v1/jobs", "key too long", { key: long }, "validation_error"],
    ["POST", "/v1/jobs", "control in key", { key: "a\u0001b" }, "validation_error"],
    ["POST", "/v1/jobs", "C1 in key", { key: "a\u0085b" }, "validation_error"],
    ["POST", "/v1/jobs", "key a number", { key: 5 }, "validation_error"],
    ["GET", "/v1/jobs?key=", "empty key filter", undefined, "validation_error"],
    ["GET", `/v1/jobs?key=${long}`, "long key filter", undefined, "validation_error"],
    ["GET", "/v1/keys?limit=0", "limit 0", undefined, "validation_error"],
    ["GET", "/v1/keys?limit=201", "limit over", undefined, "validation_error"],
    ["GET", "/v1/keys?nope=1", "unknown query", undefined, "validation_error"],
  ];

  it("every bad input is a 400 with its code and a message naming the field; nothing is written", async () => {
    await h.call(acme, "PUT", "/v1/keys/b", { weight: 2 });
    const state = async () => ({
      defaults: (await h.call(acme, "GET", "/v1/key-defaults")).json,
      b: (await h.call(acme, "GET", "/v1/keys/b")).json.override,
      jobs: (await h.call(acme, "GET", "/v1/jobs?limit=200")).json.data.length,
      keys: (await h.call(acme, "GET", "/v1/keys?limit=200")).json.data.map((k: any) => [k.key, k.override]),
    });
    const before = await state();
    for (const [method, path, what, body, code] of cases) {
      const full = method === "POST" && path === "/v1/jobs" ? { ...job(undefined), ...(body as object) } : body;
      const r = await h.call(acme, method, path, full);
      expect([r.status, r.json?.error?.code], `${method} ${path} (${what}): ${r.text}`).toEqual([400, code]);
      expect(r.json.error.message.length, what).toBeGreaterThan(10);
    }
    expect(await state()).toEqual(before);
    // The same through the admin's routes.
    for (const [path, body] of [
      ["/v1/admin/tenants/acme/key-defaults", { weight: 0 }],
      ["/v1/admin/tenants/acme/fairness-keys/b", { maxInFlight: 0 }],
    ] as const) {
      const r = await h.call(ADMIN, path.endsWith("defaults") ? "PATCH" : "PUT", path, body);
      expect([r.status, r.json.error.code]).toEqual([400, "validation_error"]);
    }
    expect(await state()).toEqual(before);
    // PATCH of a job's key: refused, the job unchanged.
    const j = (await h.call(acme, "POST", "/v1/jobs", job("kept", { schedule: { cron: "0 5 * * *" } }))).json;
    const bad = await h.call(acme, "PATCH", `/v1/jobs/${j.id}`, { key: "" });
    expect([bad.status, bad.json.error.code]).toEqual([400, "validation_error"]);
    expect(bad.json.error.message).toMatch(/^key: /);
    expect((await h.call(acme, "GET", `/v1/jobs/${j.id}`)).json.key).toBe("kept");
  });

  it("the edges are accepted: 128 characters (not bytes), 0.01, 1000, 100000", async () => {
    const wide = "é".repeat(128); // 256 bytes
    expect((await h.call(acme, "PUT", `/v1/keys/${enc(wide)}`, { weight: 0.01 })).json.key).toBe(wide);
    const emoji = "🙂".repeat(128);
    expect((await h.call(acme, "POST", "/v1/jobs", job(emoji, { schedule: { cron: "0 5 * * *" } }))).status).toBe(201);
    const r = await h.call(acme, "PUT", "/v1/keys/edge", { maxInFlight: 100_000, ratePerSecond: 0.01, weight: 1000 });
    expect(r.status, r.text).toBe(200);
    expect(r.json.policy).toEqual({ maxInFlight: 100_000, ratePerSecond: 0.01, weight: 1000 });
    const d = await h.call(acme, "PATCH", "/v1/key-defaults", { maxInFlight: 1, ratePerSecond: 100_000, weight: 0.01 });
    expect(d.json).toEqual({ maxInFlight: 1, ratePerSecond: 100_000, weight: 0.01 });
    await h.call(acme, "PATCH", "/v1/key-defaults", { maxInFlight: null, ratePerSecond: null, weight: null });
  });
});
