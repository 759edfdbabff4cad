// HTTP jobs as users write them, against the real server (`npm start`'s main.ts, Postgres): any body
// sent byte for byte, every method signed over exactly what is sent (checked with the official
// `standardwebhooks` verifier), tenant secrets substituted on the wire and nowhere else, the attempt
// history, and response truncation at the pool's limit. A canary secret value is searched for in
// every API response, the server's log and a pg_dump of the database.
import { execFileSync } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { createAdminClient, createClient, FairwayError, type FairwayClient, type Trigger } from "@fairway/sdk";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

const CANARY = `canary-${Math.random().toString(36).slice(2)}-do-not-leak`;

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  verified: boolean;
}

/** A receiver that keeps the exact bytes and headers of each request and verifies its signature over
 *  those bytes. /echo answers with the request's authorization header (in its body and a header), as
 *  a careless API might; /big answers 5000 bytes. */
async function startExactReceiver(): Promise<{
  url: string;
  got: Received[];
  secret: string[];
  close(): Promise<void>;
}> {
  const got: Received[] = [];
  const secret: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let verified = false;
      try {
        new Webhook(secret[0]).verify(raw.toString("utf8"), req.headers as Record<string, string>, {
          jsonParse: false,
        });
        verified = true;
      } catch {
        verified = false;
      }
      got.push({ method: req.method!, url: req.url!, headers: req.headers, raw, verified });
      if (req.url!.startsWith("/echo")) {
        const auth = String(req.headers.authorization ?? "");
        res.writeHead(200, { "content-type": "text/plain", "x-echo": auth }).end(`you sent ${auth}`);
      } else if (req.url!.startsWith("/big")) {
        res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(5000));
      } else if (req.url!.startsWith("/fail")) {
        res.writeHead(400, { "content-type": "text/plain", "x-reason": "nope" }).end("bad request");
      } else {
        res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return { url: `http://127.0.0.1:${port}`, got, secret, close: () => new Promise((r) => server.close(() => r())) };
}

let db: TestDb;
let server: ServerProcess;
let rx: Awaited<ReturnType<typeof startExactReceiver>>;
let client: FairwayClient;
let admin: ReturnType<typeof createAdminClient>;
/** Every API response body this test saw. */
const responses: string[] = [];
const recording: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  responses.push(await res.clone().text());
  return res;
};

beforeAll(async () => {
  db = await createTestDb({ max: 2 });
  server = await startServerProcess({ DATABASE_URL: db.url, FAIRWAY_POLL_MS: "50", FAIRWAY_LOG_LEVEL: "debug" });
  rx = await startExactReceiver();
  admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken, fetch: recording });
  const tenant = await admin.tenants.create({ id: "acme", name: "Acme" });
  rx.secret.push(tenant.signingSecret);
  client = createClient({ baseUrl: server.url, apiKey: (await admin.tenants.createKey("acme")).key, fetch: recording });
  await client.secrets.put("API_KEY", CANARY);
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await rx?.close();
  await db?.drop();
});

/** A one-time job due now, and its trigger once it has ended. */
async function deliver(target: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Trigger> {
  const job = await client.jobs.create({ name: "http", schedule: { delayMs: 0 }, target: target as never, ...extra });
  const [t] = (
    await until(
      () => client.jobs.triggers(job.id),
      (p) => ["succeeded", "dead"].includes(p.data[0]?.status ?? ""),
    )
  ).data;
  return client.triggers.get(t.id);
}

const lastTo = (path: string) => [...rx.got].reverse().find((r) => r.url.startsWith(path))!;

describe("request bodies", () => {
  it("sends a Slack-style JSON body verbatim as application/json, signed over those bytes", async () => {
    const t = await deliver({
      url: `${rx.url}/slack`,
      body: { text: "Deploy finished :rocket:", blocks: [{ type: "section" }] },
    });
    expect(t.status).toBe("succeeded");
    const r = lastTo("/slack");
    expect(r.raw.toString()).toBe('{"text":"Deploy finished :rocket:","blocks":[{"type":"section"}]}');
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.verified).toBe(true);
    expect(t.attempts![0].request).toMatchObject({ method: "POST", url: `${rx.url}/slack`, body: r.raw.toString() });
  });

  it("sends a string body with the content type the target sets", async () => {
    const body = "token=abc&text=hello+world&n=%C3%A9";
    await deliver({ url: `${rx.url}/form`, headers: { "Content-Type": "application/x-www-form-urlencoded" }, body });
    const r = lastTo("/form");
    expect(r.raw.toString()).toBe(body);
    expect(r.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(r.verified).toBe(true);
  });

  it("sends a GET with its query string and no body, signed over the empty body", async () => {
    const t = await deliver({ url: `${rx.url}/get?since=2026-01-01&tag=a%20b`, method: "GET" });
    const r = lastTo("/get");
    expect(r.method).toBe("GET");
    expect(r.url).toBe("/get?since=2026-01-01&tag=a%20b");
    expect(r.raw.length).toBe(0);
    expect(r.headers["content-type"]).toBeUndefined();
    expect(r.headers["content-length"] ?? "0").toBe("0");
    expect(r.verified).toBe(true);
    expect(t.attempts![0].request).toMatchObject({ method: "GET", body: null });
  });

  it.each(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])(
    "%s: the standardwebhooks verifier accepts the delivery",
    async (method) => {
      const t = await deliver({ url: `${rx.url}/method/${method}`, method });
      expect(t.status).toBe("succeeded");
      const r = lastTo(`/method/${method}`);
      expect(r.method).toBe(method);
      expect(r.verified).toBe(true);
      const bodyless = method === "GET" || method === "HEAD";
      expect(r.raw.length === 0).toBe(bodyless);
      if (!bodyless) expect(JSON.parse(r.raw.toString())).toMatchObject({ id: t.id, attempt: 1 }); // the envelope
    },
  );

  it("refuses a body on GET or HEAD", async () => {
    for (const method of ["GET", "HEAD"]) {
      const err = await client.jobs
        .create({
          name: "x",
          schedule: { delayMs: 0 },
          target: { url: `${rx.url}/x`, method: method as "GET", body: "a" },
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FairwayError);
      expect(err).toMatchObject({ status: 400, code: "body_not_allowed" });
    }
  });
});

describe("secrets", () => {
  it("substitutes a secret in a header and in the URL on the wire, and records only the placeholder", async () => {
    const t = await deliver({
      url: `${rx.url}/echo/\${secrets.API_KEY}?key=\${secrets.API_KEY}`,
      headers: { authorization: "Bearer ${secrets.API_KEY}" },
      body: { text: "key is ${secrets.API_KEY}" },
    });
    expect(t.status).toBe("succeeded");
    const r = lastTo("/echo");
    expect(r.url).toBe(`/echo/${CANARY}?key=${CANARY}`);
    expect(r.headers.authorization).toBe(`Bearer ${CANARY}`);
    expect(r.raw.toString()).toBe(`{"text":"key is ${CANARY}"}`);
    expect(r.verified).toBe(true);
    const a = t.attempts![0];
    expect(a.request!.url).toBe(`${rx.url}/echo/\${secrets.API_KEY}?key=\${secrets.API_KEY}`);
    expect(a.request!.headers.authorization).toBe("Bearer ${secrets.API_KEY}");
    expect(a.request!.body).toBe('{"text":"key is ${secrets.API_KEY}"}');
    // The target echoed the value back: stored with the placeholder instead.
    expect(a.response!.body).toBe("you sent Bearer ${secrets.API_KEY}");
    expect(a.response!.headers["x-echo"]).toBe("Bearer ${secrets.API_KEY}");
  });

  it("refuses an unknown secret at create and at update", async () => {
    const target = { url: `${rx.url}/x`, headers: { "x-key": "${secrets.NOPE}" } };
    await expect(client.jobs.create({ name: "x", schedule: { delayMs: 60_000 }, target })).rejects.toMatchObject({
      status: 400,
      code: "unknown_secret",
    });
    const job = await client.jobs.create({ name: "x", schedule: { delayMs: 60_000 }, target: { url: `${rx.url}/x` } });
    await expect(client.jobs.update(job.id, { target })).rejects.toMatchObject({ status: 400, code: "unknown_secret" });
    expect((await client.jobs.get(job.id)).target!.headers).toBeUndefined(); // bad input changed nothing
    await client.jobs.delete(job.id);
  });

  it("lists names only, and never answers with a value", async () => {
    const put = await client.secrets.put("OTHER", `${CANARY}-2`);
    expect(Object.keys(put).sort()).toEqual(["createdAt", "name", "updatedAt"]);
    const list = await client.secrets.list();
    expect(list.data.map((s) => s.name)).toEqual(["API_KEY", "OTHER"]);
    await expect(client.secrets.put("lower", "x")).rejects.toMatchObject({ status: 400 });
    await client.secrets.delete("OTHER");
    await expect(client.secrets.delete("OTHER")).rejects.toMatchObject({ status: 404 });
  });

  it("a secret deleted after the job was saved: secret_missing, not retried, dead-lettered", async () => {
    await client.secrets.put("GONE_SOON", "short-lived");
    const job = await client.jobs.create({
      name: "gone",
      schedule: { delayMs: 3_600_000 },
      target: { url: `${rx.url}/gone`, headers: { "x-key": "${secrets.GONE_SOON}" } },
      retry: { maxAttempts: 5, initialDelayMs: 10 },
    });
    await client.secrets.delete("GONE_SOON");
    const run = await client.jobs.run(job.id);
    const t = await until(
      () => client.triggers.get(run.id),
      (x) => x.status === "dead",
    );
    expect(t).toMatchObject({ reason: "secret_missing", attemptCount: 1, triggeredBy: "manual" });
    expect(t.attempts![0]).toMatchObject({ outcome: "secret_missing", request: null });
    expect(t.attempts![0].error).toMatch(/GONE_SOON does not exist/);
    expect(rx.got.some((r) => r.url.startsWith("/gone"))).toBe(false);
    const dead = await client.deadLetters({ jobId: job.id });
    expect(dead.data.map((d) => d.id)).toEqual([run.id]);
    // Put back, the replay delivers.
    await client.secrets.put("GONE_SOON", "back");
    await client.triggers.replay(run.id);
    const replayed = await until(
      () => client.triggers.get(run.id),
      (x) => x.status === "succeeded",
    );
    expect(replayed.triggeredBy).toBe("replay");
    expect(lastTo("/gone").headers["x-key"]).toBe("back");
  });
});

describe("attempt history", () => {
  it("records request, response headers and body, error, duration and start of a failed attempt", async () => {
    const t = await deliver(
      { url: `${rx.url}/fail`, method: "PUT", headers: { "x-custom": "1" } },
      { retry: { maxAttempts: 1 } },
    );
    expect(t).toMatchObject({ status: "dead", triggeredBy: "schedule" });
    const a = t.attempts![0];
    expect(a).toMatchObject({ outcome: "http_error", error: "HTTP 400" });
    expect(a.durationMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(a.startedAt)).not.toBeNaN();
    expect(a.request).toMatchObject({ method: "PUT", url: `${rx.url}/fail` });
    expect(a.request!.headers).toMatchObject({
      "x-custom": "1",
      "webhook-id": t.id,
      "content-type": "application/json",
      "fairway-attempt": "1",
    });
    expect(a.request!.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(JSON.parse(a.request!.body!)).toMatchObject({ id: t.id, attempt: 1 });
    expect(a.response).toMatchObject({ status: 400, body: "bad request", truncated: false });
    expect(a.response!.headers).toMatchObject({ "x-reason": "nope", "content-type": "text/plain" });
  });

  it("cuts the response body at the pool's maxResponseBytes and says so", async () => {
    await admin.pools.put("small", { concurrency: 5, timeoutMs: 5000, maxResponseBytes: 1000 });
    const job = await client.jobs.create({
      name: "big",
      type: "small",
      schedule: { delayMs: 0 },
      target: { url: `${rx.url}/big` },
    });
    const [t] = (
      await until(
        () => client.jobs.triggers(job.id),
        (p) => p.data[0]?.status === "succeeded",
      )
    ).data;
    const a = (await client.triggers.get(t.id)).attempts![0];
    expect(a.response!.truncated).toBe(true);
    expect(a.response!.body).toBe("x".repeat(1000));
    // The default pool keeps all 5000 bytes (its limit is 64 KiB).
    const whole = await deliver({ url: `${rx.url}/big` });
    expect(whole.attempts![0].response).toMatchObject({ truncated: false, body: "x".repeat(5000) });
  });
});

describe("backoff", () => {
  it("takes backoff and jitter from the pool's defaults; a job's own win; PATCH changes one", async () => {
    await admin.pools.put("lin", { concurrency: 5, timeoutMs: 5000, backoff: "linear", jitter: "none" });
    expect(await admin.pools.get("lin")).toMatchObject({ backoff: "linear", jitter: "none", maxResponseBytes: 65536 });
    const target = { url: `${rx.url}/never` };
    const a = await client.jobs.create({ name: "a", type: "lin", schedule: { delayMs: 3_600_000 }, target });
    expect(a.retry).toMatchObject({ backoff: "linear", jitter: "none" });
    const b = await client.jobs.create({
      name: "b",
      type: "lin",
      schedule: { delayMs: 3_600_000 },
      target,
      retry: { backoff: "fixed" },
    });
    expect(b.retry).toMatchObject({ backoff: "fixed", jitter: "none" });
    const c = await client.jobs.update(b.id, { retry: { jitter: "full" } });
    expect(c.retry).toMatchObject({ backoff: "fixed", jitter: "full" });
    await expect(
      client.jobs.create({ name: "d", schedule: { delayMs: 0 }, target, retry: { backoff: "quadratic" as never } }),
    ).rejects.toMatchObject({
      status: 400,
      code: "validation_error",
    });
    for (const j of [a, b]) await client.jobs.delete(j.id);
  });
});

describe("the canary", () => {
  it("appears on the wire only: in no API response, log line or database dump", async () => {
    expect(rx.got.some((r) => r.headers.authorization === `Bearer ${CANARY}`)).toBe(true); // it was used
    // Every trigger the tenant has, through the API, so their attempts are among the responses.
    const jobs = await client.jobs.list({ limit: 200 });
    for (const j of jobs.data) for (const t of (await client.jobs.triggers(j.id)).data) await client.triggers.get(t.id);
    await client.deadLetters();
    await admin.pools.get("webhook");
    const metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
    responses.push(metrics);
    expect(responses.length).toBeGreaterThan(30);
    for (const body of responses) expect(body).not.toContain(CANARY);
    expect(server.output()).not.toContain(CANARY);
    const dump = execFileSync("pg_dump", ["--data-only", db.url], { maxBuffer: 256 * 1024 * 1024 }).toString();
    expect(dump).toContain("v1."); // the sealed values are in it
    expect(dump).not.toContain(CANARY);
    expect(dump).not.toContain(Buffer.from(CANARY).toString("base64").slice(0, 20));
  });
});
