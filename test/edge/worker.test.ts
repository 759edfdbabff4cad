// The edge executor for real: the Worker bundle that `wrangler deploy` would upload,
// run in workerd by `wrangler dev --local`, against real Postgres (Hyperdrive's localConnectionString)
// and real Redis behind the Upstash REST shim, delivering to a real receiver that verifies signatures
// with the official `standardwebhooks` library, and sending email through an HTTP mail API (a local
// server answering as Resend's `POST /emails` does). Driven through the SDK, as a user would.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminClient, createClient, type FairwayClient } from "@fairway/sdk";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { REDIS_URL, deletePrefix, testPrefix } from "../support/redis.ts";
import { startUpstashShim, type UpstashShim } from "../support/upstash-shim.ts";
import { buildWorker, startWranglerDev, type WranglerDev } from "./wrangler.ts";
import { until } from "../support/until.ts";

const RUN_MS = 3000; // one scheduled invocation claims work this long (production: 50 s)
const GRACE_MS = 1000;
const adminToken = `fwadmin_edge_${randomBytes(12).toString("hex")}`;
const prefix = testPrefix("edge");

let stateDir: string;
let bundle: { script: string; output: string };
let db: TestDb;
let shim: UpstashShim;
let receiver: Receiver;
let dev: WranglerDev;
let client: FairwayClient;
let redis: Redis;
let mailApi: { url: string; got: Array<{ path: string; authorization: string; body: unknown }>; server: Server };
const mailKey = `re_${randomBytes(12).toString("hex")}`;

/** An HTTP mail API as Resend answers: 200 with the new email's id. */
async function startMailApi(): Promise<typeof mailApi> {
  const got: (typeof mailApi)["got"] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      got.push({ path: req.url ?? "", authorization: String(req.headers.authorization), body: JSON.parse(body) });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: `email_${got.length}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, got, server };
}

/** Fire the Worker's scheduled handler; wrangler answers once the invocation (and its waitUntil) is done. */
async function fireScheduled(): Promise<void> {
  const res = await fetch(`${dev.url}/cdn-cgi/handler/scheduled?cron=*+*+*+*+*`);
  expect(res.status).toBe(200);
  await res.text();
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "fairway-edge-"));
  bundle = await buildWorker(join(stateDir, "dist"), stateDir);
  db = await createTestDb({ max: 2 });
  shim = await startUpstashShim({ redisUrl: REDIS_URL, token: randomBytes(16).toString("hex") });
  receiver = await startReceiver();
  mailApi = await startMailApi();
  redis = new Redis(REDIS_URL);
  // Miniflare's Hyperdrive wants a password in the URL; local Postgres trusts and ignores it.
  const hyperdriveUrl = new URL(db.url);
  hyperdriveUrl.password = "unused";
  dev = await startWranglerDev({
    script: bundle.script,
    stateDir,
    hyperdriveUrl: hyperdriveUrl.toString(),
    vars: {
      FAIRWAY_ADMIN_TOKEN: adminToken,
      UPSTASH_REDIS_REST_URL: shim.url,
      UPSTASH_REDIS_REST_TOKEN: shim.token,
      FAIRWAY_REDIS_PREFIX: prefix,
      // The receiver is on loopback. workerd in local dev does not enforce global_fetch_strictly_public
      // (it delivers to 127.0.0.1 with the flag on); production Cloudflare does.
      FAIRWAY_ALLOW_PRIVATE_TARGETS: "true",
      FAIRWAY_RUN_MS: String(RUN_MS),
      FAIRWAY_GRACE_MS: String(GRACE_MS),
      FAIRWAY_POLL_MS: "200",
      FAIRWAY_LOG_LEVEL: "warn",
      FAIRWAY_SECRETS_KEY: randomBytes(32).toString("base64"),
      FAIRWAY_MAIL_API_URL: mailApi.url,
      FAIRWAY_MAIL_API_KEY: mailKey,
      FAIRWAY_MAIL_FROM: "fairway@example.test",
    },
  });
  const admin = createAdminClient({ baseUrl: dev.url, adminToken });
  const tenant = await admin.tenants.create({ id: "acme", name: "Acme" });
  receiver.secrets = [tenant.signingSecret];
  client = createClient({ baseUrl: dev.url, apiKey: (await admin.tenants.createKey("acme")).key });
}, 90_000);

afterAll(async () => {
  await dev?.stop();
  await receiver?.close();
  await new Promise((r) => (mailApi ? mailApi.server.close(r) : r(null)));
  await shim?.close();
  redis?.disconnect();
  await deletePrefix(prefix);
  await db?.drop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe("edge worker (wrangler dev, workerd)", () => {
  it("builds with `wrangler deploy --dry-run`, and no Node-only module reaches the bundle", () => {
    // 4.86 is the last wrangler that runs on Node 20 (the CI machines); a newer one needs Node 22.
    expect(bundle.output).toMatch(/wrangler 4\.86\.\d/);
    expect(bundle.output).toContain("--dry-run: exiting now");
    expect(bundle.output).toMatch(/env\.HYPERDRIVE .*Hyperdrive Config/);
    const code = readFileSync(bundle.script, "utf8");
    expect(code).toContain("node_modules/postgres/cf/"); // postgres.js's workerd build (cloudflare:sockets)
    for (const nodeOnly of [
      "node_modules/ioredis",
      "@electric-sql/pglite",
      "node_modules/undici",
      "node:fs",
      "node:net",
      "node:dns",
    ]) {
      expect(code, `bundle contains ${nodeOnly}`).not.toContain(nodeOnly);
    }
  });

  it("serves the API, and a scheduled run delivers signed webhooks and dead-letters a 400", async () => {
    const ok = await client.jobs.create({
      name: "welcome",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/ok` },
      payload: { n: 1 },
    });
    const bad = await client.jobs.create({
      name: "bad",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/status/400` },
      retry: { maxAttempts: 3, initialDelayMs: 20, maxDelayMs: 100 },
    });
    // The API told the ready-tenant index (Upstash REST → shim → real Redis) about the new work.
    await until(
      () => redis.zscore(`${prefix}ready:webhook`, "acme"),
      (score) => score !== null,
    );
    await fireScheduled();

    const delivered = await receiver.waitFor(
      (ds) => ds.some((d) => d.path === "/ok") && ds.some((d) => d.path === "/status/400"),
    );
    expect(delivered.every((d) => d.verified)).toBe(true);
    expect(delivered.find((d) => d.path === "/ok")!.body).toMatchObject({
      jobId: ok.id,
      payload: { n: 1 },
      attempt: 1,
    });

    const [okTrigger] = (
      await until(
        () => client.jobs.triggers(ok.id),
        (p) => p.data[0]?.status === "succeeded",
      )
    ).data;
    const okFull = await client.triggers.get(okTrigger.id);
    expect(okFull.attempts!.map((a) => [a.attempt, a.outcome, a.httpStatus])).toEqual([[1, "success", 200]]);

    const [badTrigger] = (
      await until(
        () => client.jobs.triggers(bad.id),
        (p) => p.data[0]?.status === "dead",
      )
    ).data;
    expect(badTrigger).toMatchObject({ attemptCount: 1, reason: "http_400" });
    const dead = await client.deadLetters({ jobId: bad.id });
    expect(dead.data.map((t) => t.id)).toEqual([badTrigger.id]);

    // The API's rate limiter ran there too, and the executor built the index from Postgres on first use.
    expect(await redis.exists(`${prefix}rl:api:acme`, `${prefix}ready:webhook:built`)).toBe(2);
  });

  it("keeps a create's traceparent and tracestate and forwards them on the delivery (docs/observability.md)", async () => {
    const traceparent = `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;
    await client.jobs.create(
      { name: "traced", schedule: { delayMs: 0 }, target: { url: `${receiver.url}/ok?traced=1` } },
      { traceparent, tracestate: "edge=1" },
    );
    await until(
      () => redis.zscore(`${prefix}ready:webhook`, "acme"),
      (score) => score !== null,
    );
    await fireScheduled();
    const [d] = (await receiver.waitFor((ds) => ds.some((x) => x.path === "/ok?traced=1"))).filter(
      (x) => x.path === "/ok?traced=1",
    );
    expect(d.verified).toBe(true);
    expect(d.headers.traceparent).toBe(traceparent);
    expect(d.headers.tracestate).toBe("edge=1");
  });

  it("seals a secret in the Worker and substitutes it at delivery, recording only the placeholder", async () => {
    const value = `edge-${randomBytes(8).toString("hex")}`;
    await client.secrets.put("EDGE_KEY", value);
    const job = await client.jobs.create({
      name: "with-secret",
      schedule: { delayMs: 0 },
      target: {
        url: `${receiver.url}/ok?key=\${secrets.EDGE_KEY}`,
        headers: { "x-api-key": "${secrets.EDGE_KEY}" },
        body: { text: "hi" },
      },
    });
    await until(
      () => redis.zscore(`${prefix}ready:webhook`, "acme"),
      (score) => score !== null,
    );
    await fireScheduled();
    const [d] = (await receiver.waitFor((ds) => ds.some((x) => x.path === `/ok?key=${value}`))).filter(
      (x) => x.path === `/ok?key=${value}`,
    );
    expect(d.headers["x-api-key"]).toBe(value);
    expect(d.body).toEqual({ text: "hi" });
    expect(d.verified).toBe(true);
    const [t] = (
      await until(
        () => client.jobs.triggers(job.id),
        (p) => p.data[0]?.status === "succeeded",
      )
    ).data;
    const [a] = (await client.triggers.get(t.id)).attempts!;
    expect(a.request).toMatchObject({ url: `${receiver.url}/ok?key=\${secrets.EDGE_KEY}`, body: '{"text":"hi"}' });
    expect(a.request!.headers["x-api-key"]).toBe("${secrets.EDGE_KEY}");
    expect(JSON.stringify(a)).not.toContain(value);
  });

  it("materializes a cron job inside the run (timezones in workerd) and fires one trigger per instant", async () => {
    const job = await client.jobs.create({
      name: "tick",
      schedule: { cron: "* * * * * *", timezone: "Europe/Berlin" },
      target: { url: `${receiver.url}/ok?cron=tick` },
    });
    await fireScheduled();
    await client.jobs.delete(job.id);
    const ticks = receiver.deliveries.filter((d) => d.path === "/ok?cron=tick");
    expect(ticks.length).toBeGreaterThanOrEqual(2); // a 3 s run spans at least two whole seconds
    expect(ticks.every((d) => d.verified)).toBe(true);
    const instants = ticks.map((d) => (d.body as { scheduledFor: string }).scheduledFor);
    expect(new Set(instants).size).toBe(instants.length);
    expect(instants.every((i) => i.endsWith(".000Z"))).toBe(true);
  });

  it("releases a webhook still running when the run ends: back to pending, no attempt counted", async () => {
    const slowMs = RUN_MS + GRACE_MS + 2000;
    const job = await client.jobs.create({
      name: "slow",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/slow/${slowMs}` },
      timeoutMs: 30_000,
    });
    await fireScheduled(); // returns after the run's graceful stop
    expect(receiver.deliveries.some((d) => d.path === `/slow/${slowMs}`)).toBe(true); // it did start
    const [t] = (await client.jobs.triggers(job.id)).data;
    const full = await client.triggers.get(t.id);
    expect({ status: full.status, attemptCount: full.attemptCount, attempts: full.attempts }).toEqual({
      status: "pending",
      attemptCount: 0,
      attempts: [],
    });
    await client.jobs.delete(job.id); // so later runs leave it alone
  });

  it("overlapping scheduled runs deliver each trigger exactly once", async () => {
    const jobs = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        client.jobs.create({
          name: `burst-${i}`,
          schedule: { delayMs: 0 },
          target: { url: `${receiver.url}/ok?burst=${i}` },
        }),
      ),
    );
    await Promise.all([fireScheduled(), fireScheduled()]);
    const burst = (
      await receiver.waitFor((ds) => ds.filter((d) => d.path.startsWith("/ok?burst=")).length >= 12)
    ).filter((d) => d.path.startsWith("/ok?burst="));
    expect(burst).toHaveLength(12);
    expect(new Set(burst.map((d) => d.id)).size).toBe(12);
    for (const job of jobs) {
      const [t] = (await client.jobs.triggers(job.id)).data;
      expect({ status: t.status, attemptCount: t.attemptCount }).toEqual({ status: "succeeded", attemptCount: 1 });
    }
  });

  it("serves the dashboard: sign-in, a portal link opening the tenant's view, a tampered link refused", async () => {
    const login = await fetch(`${dev.url}/dashboard/login`, {
      method: "POST",
      body: new URLSearchParams({ token: adminToken }),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const cookie = login.headers.get("set-cookie")!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const tenants = await fetch(`${dev.url}/dashboard/admin`, { headers: { cookie: cookie.split(";")[0] } });
    expect(await tenants.text()).toContain("Acme");
    // The pools (with their pause buttons) and the executors read the same store through Hyperdrive.
    const pools = await fetch(`${dev.url}/dashboard/admin/pools`, { headers: { cookie: cookie.split(";")[0] } });
    expect(await pools.text()).toContain('aria-label="Pause pool webhook"');
    const executors = await fetch(`${dev.url}/dashboard/admin/executors`, {
      headers: { cookie: cookie.split(";")[0] },
    });
    expect(executors.status).toBe(200);
    expect(await executors.text()).toContain("<h1>Executors</h1>");
    const link = await createAdminClient({ baseUrl: dev.url, adminToken }).tenants.portalLink("acme");
    const opened = await fetch(link.url);
    expect(opened.status).toBe(200);
    expect(new URL(opened.url).pathname).toMatch(/^\/dashboard\/portal\/[^/]+\/jobs$/);
    expect(await opened.text()).toContain("welcome");
    const base = new URL(opened.url).pathname.replace(/\/jobs$/, "");
    const secrets = await fetch(`${dev.url}${base}/secrets`);
    expect(secrets.status).toBe(200);
    expect(await secrets.text()).toContain("<h1>Secrets</h1>");
    // The notifications page, and its add-channel form taking an email channel: this Worker has a
    // mail API.
    const notifications = await fetch(`${dev.url}${base}/notifications`);
    expect(notifications.status).toBe(200);
    const notificationsHtml = await notifications.text();
    expect(notificationsHtml).toContain("<h1>Notifications</h1>");
    const csrf = /name="csrf" value="([^"]+)"/.exec(notificationsHtml)![1];
    const added = await fetch(`${dev.url}${base}/notifications/channels`, {
      method: "POST",
      body: new URLSearchParams({ csrf, type: "email", to: "portal@example.test", windowSeconds: "900" }),
      redirect: "manual",
    });
    expect(added.status).toBe(303);
    await added.text();
    expect((await client.notificationChannels.list()).data.map((c) => c.to)).toContain("portal@example.test");
    const tampered = await fetch(`${link.url.slice(0, -3)}abc`);
    expect(tampered.status).toBe(403);
    await tampered.text();
  });

  it("sends an email notification through the HTTP mail API, with its key, never showing the key", async () => {
    const channel = await client.notificationChannels.create({ type: "email", to: "ops@example.test" });
    const queued = await client.notificationChannels.test(channel.id);
    await fireScheduled();
    const sent = await until(
      () => client.notifications({ channelId: channel.id }),
      (p) => p.data[0]?.status === "sent",
    );
    expect(sent.data.map((n) => n.id)).toEqual([queued.id]);
    const mails = mailApi.got.filter((m) => (m.body as { to: string[] }).to.includes("ops@example.test"));
    expect(mails).toHaveLength(1);
    expect(mails[0].path).toBe("/emails");
    expect(mails[0].authorization).toBe(`Bearer ${mailKey}`);
    expect(mails[0].body).toMatchObject({ from: "fairway@example.test", to: ["ops@example.test"] });
    expect(mails[0].body).toMatchObject({ subject: "Fairway: test notification" });
    expect((mails[0].body as { text: string }).text).toMatch(/^A test notification from Fairway: this channel works\./);
    expect(JSON.stringify(await client.notificationChannels.list())).not.toContain(mailKey);
  });
  it("fairness keys on the Worker: a keyed job is due under its key in /v1/keys, then delivered", async () => {
    const key = "edge customer/1";
    await client.keys.put(key, { maxInFlight: 1, weight: 2 });
    const job = await client.jobs.create({
      name: "keyed",
      key,
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/ok` },
    });
    expect(job.key).toBe(key);
    const listed = await client.keys.list();
    expect(listed.data.find((k) => k.key === key)).toMatchObject({
      due: 1,
      running: 0,
      override: { maxInFlight: 1, weight: 2 },
      policy: { maxInFlight: 1, ratePerSecond: null, weight: 2 },
    });
    expect((await client.jobs.list({ key })).data.map((j) => j.id)).toEqual([job.id]);
    await fireScheduled();
    await until(
      () => client.jobs.triggers(job.id),
      (p) => p.data[0]?.status === "succeeded",
    );
    expect(await client.keys.get(key)).toMatchObject({ due: 0, running: 0 });
    expect((await client.keyDefaults.update({ weight: 3 })).weight).toBe(3);
    expect((await client.keys.delete(key)).policy.weight).toBe(3);
  });
});
