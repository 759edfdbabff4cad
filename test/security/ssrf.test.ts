// SSRF. Every private / loopback / link-local / CGNAT / ULA / metadata target, in every
// literal encoding, is refused when a job is created or updated (0 rows written); and at connect time a
// canary listener on 127.0.0.1 sees 0 connections — for literal forms handed straight to the undici
// transport, for `localhost` resolved by the system resolver, and for a public-looking name whose DNS
// answer is 127.0.0.1 (rebinding), delivered by the real executor. Redirects are never followed.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { query, sql } from "@fairway/store";
import { seedPool } from "../support/seed.ts";
import { until } from "../support/until.ts";
import { createHarness, type Harness } from "./harness.ts";

/** A listener that only counts connections (and answers 200, so a leak would look like success). */
async function startCanary(): Promise<{ server: Server; port: number; connections: () => number }> {
  let n = 0;
  const server = createServer((_req, res) => res.end("canary"));
  server.on("connection", () => n++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { server, port: (server.address() as AddressInfo).port, connections: () => n };
}
const close = (s: Server) =>
  new Promise<void>((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });

// The literal encodings an attacker would try; {P} is the canary's port.
const LITERAL_FORMS = [
  "http://127.0.0.1:{P}/",
  "http://127.1:{P}/",
  "http://2130706433:{P}/",
  "http://0x7f.1:{P}/",
  "http://0x7f000001:{P}/",
  "http://0177.0.0.1:{P}/",
  "http://127.0.0.1.:{P}/",
  "http://[::ffff:127.0.0.1]:{P}/",
  "http://[::ffff:7f00:1]:{P}/",
  "http://0.0.0.0:{P}/",
  "http://0:{P}/",
  "http://[::1]:{P}/",
  "http://%31%32%37.0.0.1:{P}/",
  "https://127.0.0.1:{P}/",
];

// Creation-time matrix: the list, every private range, and names that mean "this machine".
const FORBIDDEN_TARGETS = [
  ...LITERAL_FORMS.map((u) => u.replace("{P}", "8080")),
  "http://[::ffff:a9fe:a9fe]/",
  "http://169.254.169.254/latest/meta-data/",
  "http://169.254.169.254./",
  "http://[::ffff:169.254.169.254]/",
  "http://2852039166/",
  "http://0xa9fea9fe/",
  "http://0251.0376.0251.0376/",
  "http://169.254.1.1/",
  "http://10.0.0.1/",
  "http://10.255.255.255/",
  "http://172.16.0.1/",
  "http://172.31.255.255/",
  "http://192.168.0.1/",
  "http://192.168.255.255/",
  "http://100.64.0.1/",
  "http://100.127.255.254/",
  "http://[fd00::1]/",
  "http://[fc00::1]/",
  "http://[fd00:ec2::254]/",
  "http://[fe80::1]/",
  "http://[64:ff9b::a9fe:a9fe]/",
  "http://[2002:a9fe:a9fe::]/",
  "http://[::]/",
  "http://224.0.0.1/",
  "http://255.255.255.255/",
  "http://localhost/",
  "http://LocalHost./",
  "http://foo.localhost/",
  "http://metadata.google.internal/",
  "http://metadata/",
  "http://instance-data/",
  "http://host.docker.internal/",
  "http://printer.local/",
  "http://intranet/",
  "ftp://example.com/",
  "file:///etc/passwd",
  "gopher://example.com:70/",
  "ws://example.com/",
  "data:text/plain,hi",
  "javascript:alert(1)",
  "http://user:pass@example.com/",
  "http://example.com@127.0.0.1/",
  "not a url",
  "//example.com/x",
];

let h: Harness;
let canary: Awaited<ReturnType<typeof startCanary>>;
let tenant: Awaited<ReturnType<Harness["tenant"]>>;

beforeAll(async () => {
  h = await createHarness({ allowPrivateTargets: false });
  canary = await startCanary();
  tenant = await h.tenant("ssrf");
});
afterAll(async () => {
  await close(canary.server);
  await h.tdb.drop();
});

describe("at creation (FAIRWAY_ALLOW_PRIVATE_TARGETS=false)", () => {
  test(`all ${FORBIDDEN_TARGETS.length} forbidden targets are refused on create and update, writing nothing`, async () => {
    const ok = await h.call("POST", "/v1/jobs", {
      token: tenant.key,
      body: { name: "ok", schedule: { delayMs: 3_600_000 }, target: { url: "https://example.com/" } },
    });
    expect(ok.status).toBe(201);
    const jobId = ((await ok.json()) as { id: string }).id;
    const before = await h.counts();
    const accepted: string[] = [];
    for (const url of FORBIDDEN_TARGETS) {
      const create = await h.call("POST", "/v1/jobs", {
        token: tenant.key,
        body: { name: "x", schedule: { delayMs: 0 }, target: { url } },
      });
      const update = await h.call("PATCH", `/v1/jobs/${jobId}`, { token: tenant.key, body: { target: { url } } });
      for (const r of [create, update]) {
        if (r.status !== 400) accepted.push(`${url} → ${r.status}`);
        else
          expect(["forbidden_target", "forbidden_scheme", "invalid_url"]).toContain(
            ((await r.json()) as { error: { code: string } }).error.code,
          );
      }
    }
    expect(accepted).toEqual([]);
    expect(await h.counts()).toEqual(before);
    const [row] = await query<{ url: string }>(h.db, sql`SELECT target->>'url' AS url FROM jobs WHERE id = ${jobId}`);
    expect(row.url).toBe("https://example.com/");
  });
});

describe("at connect time: the canary on 127.0.0.1 sees 0 connections", () => {
  test("literal forms and localhost through the undici transport", async () => {
    const transport = createUndiciTransport({ allowPrivate: false });
    const urls = [
      ...LITERAL_FORMS.map((u) => u.replace("{P}", String(canary.port))),
      `http://localhost:${canary.port}/`,
      `http://vm:${canary.port}/`,
    ];
    try {
      for (const url of urls) {
        const sent = transport({ url, method: "POST", headers: {}, body: "{}", signal: AbortSignal.timeout(5000) });
        await expect(sent, url).rejects.toThrow();
      }
    } finally {
      await transport.close();
    }
    expect(canary.connections()).toBe(0);

    // Control: the same canary is reachable when private targets are allowed, so 0 above means refused.
    const open = createUndiciTransport({ allowPrivate: true });
    const res = await open({
      url: `http://127.1:${canary.port}/`,
      method: "POST",
      headers: {},
      body: "{}",
      signal: AbortSignal.timeout(5000),
    });
    await open.close();
    expect(res.status).toBe(200);
    expect(canary.connections()).toBe(1);
  });

  test("a public-looking name that resolves to 127.0.0.1 (DNS rebinding) is refused by the executor's transport", async () => {
    const before = canary.connections();
    const fakeDns = ((
      host: string,
      _opts: unknown,
      cb: (e: Error | null, a: Array<{ address: string; family: number }>) => void,
    ) => {
      // The attacker's zone: a public answer at creation, then the loopback address at delivery time.
      if (host === "rebind.attacker.example") cb(null, [{ address: "127.0.0.1", family: 4 }]);
      else cb(Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" }), []);
    }) as unknown as NonNullable<Parameters<typeof createUndiciTransport>[0]["lookup"]>;
    const transport = createUndiciTransport({ allowPrivate: false, lookup: fakeDns });
    await seedPool(h.db, "webhook", 10);
    const created = await h.call("POST", "/v1/jobs", {
      token: tenant.key,
      body: {
        name: "rebind",
        schedule: { delayMs: 0 },
        target: { url: `http://rebind.attacker.example:${canary.port}/hook` },
        retry: { maxAttempts: 1 },
      },
    });
    expect(created.status).toBe(201); // nothing about the name is private: creation cannot know
    const jobId = ((await created.json()) as { id: string }).id;
    const executor = new Executor({ db: h.db, transport, allowPrivateTargets: false, settleLingerMs: 0 });
    try {
      const attempts = await until(
        async () => {
          await executor.tick();
          return query<{ outcome: string; error: string }>(
            h.db,
            sql`SELECT a.outcome, a.error FROM attempts a JOIN triggers t ON t.id = a.trigger_id WHERE t.job_id = ${jobId}`,
          );
        },
        (rows) => rows.length > 0,
        15_000,
        "the attempt recorded",
      );
      expect(attempts).toHaveLength(1);
      expect(attempts[0].outcome).toBe("forbidden_target");
      expect(attempts[0].error).toMatch(/forbidden address \(127\.0\.0\.1\)/);
    } finally {
      await executor.stop(1000);
      await transport.close();
    }
    expect(canary.connections()).toBe(before);
  });

  test("redirects are never followed", async () => {
    const before = canary.connections();
    const redirector = createServer((_req, res) =>
      res.writeHead(302, { location: `http://127.0.0.1:${canary.port}/stolen` }).end(),
    );
    await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", () => r()));
    const transport = createUndiciTransport({ allowPrivate: true });
    try {
      const port = (redirector.address() as AddressInfo).port;
      const res = await transport({
        url: `http://127.0.0.1:${port}/`,
        method: "POST",
        headers: {},
        body: "{}",
        signal: AbortSignal.timeout(5000),
      });
      expect(res.status).toBe(302);
    } finally {
      await transport.close();
      await close(redirector);
    }
    expect(canary.connections()).toBe(before);
  });
});
