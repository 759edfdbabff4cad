// Failure notifications end to end: the real server process (Postgres), a real webhook receiver that
// verifies signatures with the official `standardwebhooks` library, and a real SMTP server
// (`smtp-server`). Each case has its own tenant, so its channels hear only its own events. Waits poll
// for conditions; assertions are on counts and contents, never on times.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SMTPServer } from "smtp-server";
import { createAdminClient, createClient, FairwayError, type FairwayClient, type Notification } from "@fairway/sdk";
import { query, sql } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

interface Mail {
  to: string[];
  raw: string;
}

let db: TestDb;
let server: ServerProcess;
let rx: Receiver;
let smtp: SMTPServer;
const mails: Mail[] = [];
let admin: ReturnType<typeof createAdminClient>;

async function startSmtp(): Promise<number> {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, done) {
      let raw = "";
      stream.on("data", (c: Buffer) => (raw += c.toString("utf8")));
      stream.on("end", () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        done();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
  const addr = smtp.server.address();
  return typeof addr === "object" && addr ? addr.port : 0;
}

beforeAll(async () => {
  const [port, database, receiver] = await Promise.all([startSmtp(), createTestDb({ max: 2 }), startReceiver()]);
  db = database;
  rx = receiver;
  server = await startServerProcess({
    DATABASE_URL: db.url,
    FAIRWAY_POLL_MS: "50",
    FAIRWAY_SMTP_URL: `smtp://127.0.0.1:${port}`,
    FAIRWAY_MAIL_FROM: "fairway@example.test",
  });
  admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
  // Quick retries, so a failing channel exhausts its attempts within the test.
  await admin.pools.put("fairway.notifications", {
    concurrency: 10,
    timeoutMs: 5000,
    maxAttempts: 2,
    initialDelayMs: 100,
    maxDelayMs: 200,
  });
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await rx?.close();
  await new Promise<void>((r) => (smtp ? smtp.close(() => r()) : r()));
  await db?.drop();
});

async function tenant(id: string, quotas: { consecutiveFailureLimit?: number; maxJobs?: number } = {}) {
  const t = await admin.tenants.create({ id, name: id, ...quotas });
  rx.secrets.push(t.signingSecret);
  const key = await admin.tenants.createKey(id);
  return { client: createClient({ baseUrl: server.url, apiKey: key.key }), secret: t.signingSecret };
}

const at = (path: string) => rx.deliveries.filter((d) => d.path === path);
const body = (d: { body: unknown }) => d.body as { type: string; timestamp: string; data: Record<string, unknown> };

/** A job that fires once now into `path` and fails for good on its first attempt. */
function failingOnce(client: FairwayClient, name: string, path = "/status/400") {
  return client.jobs.create({
    name,
    schedule: { delayMs: 0 },
    target: { url: `${rx.url}${path}` },
    retry: { maxAttempts: 1 },
  });
}

async function notifications(client: FairwayClient, ok: (n: Notification[]) => boolean, what: string) {
  return (
    await until(
      () => client.notifications({ limit: 200 }),
      (p) => ok(p.data),
      30_000,
      what,
    )
  ).data;
}

describe("failure notifications", () => {
  it("a channel answering 3xx is not retried: one request, and the notification ends failed", async () => {
    const { client } = await tenant("redirected");
    await client.notificationChannels.create({ type: "webhook", url: `${rx.url}/status/302` });
    const before = at("/status/302").length;
    await failingOnce(client, "redirected-report");
    const done = await notifications(client, (n) => n.length > 0 && n.every((x) => x.status !== "pending"), "ended");
    expect(done.map((n) => n.status)).not.toContain("sent");
    // The notification pool allows 2 attempts: a retried 3xx would have reached the receiver twice.
    expect(at("/status/302").length - before).toBe(1);
  });

  it("a 400 gives exactly one trigger.dead at the webhook channel, signed with the tenant's secret", async () => {
    const { client, secret } = await tenant("dead-one");
    const channel = await client.notificationChannels.create({ type: "webhook", url: `${rx.url}/hook/dead-one` });
    expect(channel).toMatchObject({
      type: "webhook",
      url: `${rx.url}/hook/dead-one`,
      events: null,
      windowSeconds: 900,
    });
    const job = await failingOnce(client, "nightly-report");
    const sent = await notifications(client, (n) => n.some((x) => x.status === "sent"), "notification sent");
    await until(
      () => client.deadLetters(),
      (p) => p.data.length === 1,
    );

    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ event: "trigger.dead", channelId: channel.id, jobId: job.id, folded: 0 });
    const got = at("/hook/dead-one");
    expect(got).toHaveLength(1);
    const [d] = got;
    expect(rx.secrets).toContain(secret);
    expect(d.verified).toBe(true); // standardwebhooks' Webhook.verify over the bytes received
    expect(d.id).toBe(sent[0].id);
    const envelope = body(d);
    expect(Object.keys(envelope).sort()).toEqual(["data", "timestamp", "type"]);
    expect(envelope.type).toBe("trigger.dead");
    expect(envelope.data).toMatchObject({
      job: { id: job.id, name: "nightly-report" },
      reason: "http_400",
      lastAttempt: { outcome: "http_error", httpStatus: 400, error: "HTTP 400" },
      folded: 0,
    });
    expect((envelope.data.trigger as { attempts: number }).attempts).toBe(1);

    const metrics = await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${server.adminToken}` },
    }).then((r) => r.text());
    expect(metrics).toMatch(
      /fairway_notifications_total\{event="trigger\.dead",channel_type="webhook",status="sent"\} [1-9]/,
    );
  }, 60_000);

  it("a cron firing every second into a failing target: one notification per window, the next says how many it folded", async () => {
    const { client } = await tenant("storm", { consecutiveFailureLimit: 0 });
    await client.notificationChannels.create({ type: "webhook", url: `${rx.url}/hook/storm`, windowSeconds: 2 });
    const job = await client.jobs.create({
      name: "every-second",
      schedule: { cron: "* * * * * *" },
      target: { url: `${rx.url}/status/400` },
      retry: { maxAttempts: 1 },
    });
    await notifications(client, (n) => n.filter((x) => x.status === "sent").length >= 3, "three notifications");
    await client.jobs.pause(job.id);
    // Quiet: nothing running, every notification made has been sent.
    const dead = await until(
      async () => ({
        dead: (await client.deadLetters({ limit: 200 })).data.length,
        running: (await client.jobs.triggers(job.id, { limit: 200 })).data.filter((t) => t.status === "running").length,
        open: (await client.notifications({ limit: 200 })).data.filter((n) => n.status === "pending").length,
      }),
      (s) => s.running === 0 && s.open === 0,
    ).then((s) => s.dead);
    const sent = (await client.notifications({ limit: 200 })).data.reverse(); // oldest first
    const [fold] = await query<{ folded: number }>(
      db.store.db,
      sql`SELECT f.folded FROM notification_folds f JOIN notification_channels c ON c.id = f.channel_id
           WHERE c.tenant_id = 'storm' AND f.event = 'trigger.dead'`,
    );

    expect(sent.every((n) => n.event === "trigger.dead" && n.status === "sent")).toBe(true);
    expect(at("/hook/storm")).toHaveLength(sent.length);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    expect(sent.length).toBeLessThan(dead); // folded, not one per second
    expect(sent[0].folded).toBe(0);
    expect(sent.slice(1).some((n) => n.folded >= 1)).toBe(true);
    // Every dead letter is accounted for exactly once: sent, folded into a later one, or folded since the last.
    expect(sent.length + sent.reduce((s, n) => s + n.folded, 0) + fold.folded).toBe(dead);
    for (const n of sent) expect(body(at("/hook/storm").find((d) => d.id === n.id)!).data.folded).toBe(n.folded);
  }, 90_000);

  it("Slack channels get a readable {text}", async () => {
    const { client } = await tenant("slack");
    const channel = await client.notificationChannels.create({ type: "slack", url: `${rx.url}/slack/T00/B00/xyz` });
    expect(channel.url).toBe(`${rx.url}/…`); // the webhook URL is a credential: never shown back
    await failingOnce(client, "sync-crm");
    await notifications(client, (n) => n.some((x) => x.status === "sent"), "slack notification");
    const [d] = at("/slack/T00/B00/xyz");
    const msg = d.body as Record<string, unknown>;
    expect(Object.keys(msg)).toEqual(["text"]);
    expect(msg.text).toMatch(/sync-crm/);
    expect(msg.text).toMatch(/dead after 1 attempt\(s\): HTTP 400/);
  }, 60_000);

  it("email channels send a plain-text message through SMTP", async () => {
    const { client } = await tenant("mail");
    await client.notificationChannels.create({ type: "email", to: "ops@example.test" });
    await failingOnce(client, "billing-export");
    await notifications(client, (n) => n.some((x) => x.status === "sent"), "email notification");
    const mail = await until(
      () => mails.filter((m) => m.to.includes("ops@example.test")),
      (m) => m.length === 1,
    );
    const text = mail[0].raw.replace(/=\r\n/g, ""); // quoted-printable soft line breaks
    expect(text).toMatch(/^Subject: Fairway: billing-export failed/m);
    expect(mail[0].raw).toMatch(/^From: fairway@example\.test/m);
    expect(text).toMatch(/Content-Type: text\/plain/);
    expect(text).toMatch(/is dead after 1 attempt/);
  }, 60_000);

  it("a 410 pauses the job and sends job.paused with the reason", async () => {
    const { client } = await tenant("gone");
    await client.notificationChannels.create({ type: "webhook", url: `${rx.url}/hook/gone`, events: ["job.paused"] });
    const job = await client.jobs.create({
      name: "retired-endpoint",
      schedule: { cron: "0 3 * * *", timezone: "UTC" },
      target: { url: `${rx.url}/status/410` },
    });
    await client.jobs.run(job.id);
    const [n] = await notifications(client, (list) => list.some((x) => x.status === "sent"), "job.paused");
    expect(n).toMatchObject({ event: "job.paused", jobId: job.id });
    expect(body(at("/hook/gone")[0])).toMatchObject({
      type: "job.paused",
      data: { job: { id: job.id, name: "retired-endpoint" }, reason: "http_410" },
    });
    expect(await client.jobs.get(job.id)).toMatchObject({ status: "paused", pauseReason: "http_410" });
    expect((await client.notifications()).data).toHaveLength(1); // the channel takes job.paused only
  }, 60_000);

  it("a schedule that can no longer be computed pauses the job and sends job.paused", async () => {
    const { client } = await tenant("tz");
    await client.notificationChannels.create({ type: "webhook", url: `${rx.url}/hook/tz`, events: ["job.paused"] });
    const job = await client.jobs.create({
      name: "tz-gone",
      schedule: { cron: "* * * * * *" },
      target: { url: `${rx.url}/ok` },
    });
    // As if the zone had left the tz database in an upgrade (the API refuses such a zone).
    await query(db.store.db, sql`UPDATE jobs SET timezone = 'Mars/Olympus_Mons' WHERE id = ${job.id}`);
    const [n] = await notifications(client, (l) => l.some((x) => x.status === "sent"), "job.paused");
    expect(n).toMatchObject({ event: "job.paused", jobId: job.id, data: { reason: "schedule_not_computable" } });
    expect(await client.jobs.get(job.id)).toMatchObject({ status: "paused", pauseReason: "schedule_not_computable" });
  }, 60_000);

  it("N dead letters in a row pause the job; resume resets the count; a success notifies job.recovered", async () => {
    const { client } = await tenant("streak", { consecutiveFailureLimit: 3 });
    const channel = await client.notificationChannels.create({
      type: "webhook",
      url: `${rx.url}/hook/streak`,
      events: ["job.paused", "job.recovered"],
    });
    const job = await client.jobs.create({
      name: "flaky-sync",
      schedule: { cron: "0 3 * * *", timezone: "UTC" },
      target: { url: `${rx.url}/status/400` },
      retry: { maxAttempts: 1 },
      notify: { channels: [channel.id] },
    });
    const failOnce = async (n: number) => {
      const t = await client.jobs.run(job.id);
      await until(
        () => client.triggers.get(t.id),
        (x) => x.status === "dead",
        20_000,
        `run ${n} dead`,
      );
    };
    for (let i = 1; i <= 3; i++) await failOnce(i);
    await until(
      () => client.jobs.get(job.id),
      (j) => j.status === "paused",
    );
    expect((await client.jobs.get(job.id)).pauseReason).toBe("consecutive_failures");
    const [paused] = await notifications(client, (l) => l.some((x) => x.status === "sent"), "job.paused");
    expect(paused).toMatchObject({ event: "job.paused", data: { reason: "consecutive_failures" } });

    await client.jobs.resume(job.id);
    await failOnce(4);
    await failOnce(5);
    // Two in a row since the resume: under the limit of 3, so still active.
    expect(await client.jobs.get(job.id)).toMatchObject({ status: "active", pauseReason: null });

    await client.jobs.update(job.id, { target: { url: `${rx.url}/ok` } });
    await client.jobs.run(job.id);
    const list = await notifications(
      client,
      (l) => l.some((x) => x.event === "job.recovered" && x.status === "sent"),
      "job.recovered",
    );
    expect(list.map((x) => x.event).sort()).toEqual(["job.paused", "job.recovered"]);
    expect(list.find((x) => x.event === "job.recovered")!.data).toMatchObject({ job: { id: job.id }, failedBefore: 2 });
  }, 90_000);

  it("an auto-paused cron job's fires written ahead are cancelled and its schedule goes back to them", async () => {
    const { client } = await tenant("rewind", { consecutiveFailureLimit: 3 });
    const job = await client.jobs.create({
      name: "every-second-failing",
      schedule: { cron: "* * * * * *" },
      target: { url: `${rx.url}/status/400` },
      retry: { maxAttempts: 1 },
    });
    await until(
      () => client.jobs.get(job.id),
      (j) => j.status === "paused",
    );
    const [r] = await query<{ next: Date | string; first: Date | string | null; n: number }>(
      db.store.db,
      sql`SELECT j.next_fire_at AS next, min(t.scheduled_for) AS first, count(t.id)::int AS n
            FROM jobs j LEFT JOIN triggers t ON t.job_id = j.id AND t.status = 'cancelled' AND t.reason = 'paused'
                                            AND t.kind = 'scheduled' AND t.attempt_count = 0 AND t.scheduled_for > j.updated_at
           WHERE j.id = ${job.id} GROUP BY j.next_fire_at`,
    );
    expect(r.n).toBeGreaterThan(0); // the materializer had written fires ahead
    expect(new Date(r.next).getTime()).toBe(new Date(r.first!).getTime());
    expect((await client.jobs.get(job.id)).pauseReason).toBe("consecutive_failures");
  }, 60_000);

  it("a notification that fails is retried, then dead, and notifies no one", async () => {
    const { client } = await tenant("loop");
    await client.notificationChannels.create({ type: "webhook", url: `${rx.url}/status/503` });
    const other = await client.notificationChannels.create({ type: "webhook", url: `${rx.url}/hook/loop-other` });
    await failingOnce(client, "will-die");
    const list = await notifications(
      client,
      (l) => l.length === 2 && l.every((x) => x.status === "sent" || x.status === "failed"),
      "both notifications finished",
    );
    const failed = list.find((x) => x.status === "failed")!;
    expect(failed.attempts).toBe(2); // the pool's maxAttempts
    expect(list.find((x) => x.status === "sent")!.channelId).toBe(other.id);
    // The dead notification made no notification (to either channel), and was not signed twice.
    const again = await client.notifications({ limit: 200 });
    expect(again.data).toHaveLength(2);
    expect(at("/hook/loop-other")).toHaveLength(1);
    // Its trigger is a dead letter of the tenant's, with both attempts recorded.
    const trigger = await client.triggers.get(failed.id);
    expect(trigger.attempts?.map((a) => a.error)).toEqual([
      "HTTP 503 from the webhook channel",
      "HTTP 503 from the webhook channel",
    ]);
  }, 60_000);

  it("channels: validation, unknown ids in notify, the test endpoint, and tenant.quota_exhausted", async () => {
    const { client } = await tenant("chan", { maxJobs: 1 });
    const bad = await client.notificationChannels.create({ type: "pager" } as never).catch((e: FairwayError) => e);
    expect(bad).toBeInstanceOf(FairwayError);
    expect((bad as FairwayError).code).toBe("validation_error");
    const unknown = await client.jobs
      .create({
        name: "x",
        schedule: { cron: "0 3 * * *" },
        target: { url: `${rx.url}/ok` },
        notify: { channels: ["nch_nope"] },
      })
      .catch((e: FairwayError) => e);
    expect((unknown as FairwayError).status).toBe(400);
    expect((unknown as FairwayError).code).toBe("unknown_channel");

    const ch = await client.notificationChannels.create({ type: "webhook", url: `${rx.url}/hook/chan` });
    const test = await client.notificationChannels.test(ch.id);
    expect(test).toMatchObject({ event: "notification.test", channelId: ch.id, status: "pending" });
    await client.jobs.create({ name: "only", schedule: { cron: "0 3 * * *" }, target: { url: `${rx.url}/ok` } });
    const refused = await client.jobs
      .create({ name: "over", schedule: { cron: "0 3 * * *" }, target: { url: `${rx.url}/ok` } })
      .catch((e: FairwayError) => e);
    expect((refused as FairwayError).code).toBe("max_jobs_exceeded");
    const list = await notifications(
      client,
      (l) => l.length === 2 && l.every((x) => x.status === "sent"),
      "test and quota notifications",
    );
    expect(list.map((x) => x.event).sort()).toEqual(["notification.test", "tenant.quota_exhausted"]);
    expect(body(at("/hook/chan").find((d) => body(d).type === "tenant.quota_exhausted")!).data).toMatchObject({
      quota: "maxJobs",
      limit: 1,
    });

    expect((await client.notificationChannels.list()).data.map((c) => c.id)).toEqual([ch.id]);
    await client.notificationChannels.delete(ch.id);
    const gone = await client.notificationChannels.delete(ch.id).catch((e: FairwayError) => e);
    expect((gone as FairwayError).status).toBe(404);
    // The tenant's notifications job is Fairway's: not in the tenant's job list.
    expect((await client.jobs.list()).data.map((j) => j.name)).toEqual(["only"]);
  }, 60_000);
});
