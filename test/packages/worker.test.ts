// createWorker against the real server process (DATABASE_URL): jobs of a handler type are created
// through the SDK with no target, run once in the worker's own handler (never by the server's
// executor), failed attempts are retried and dead-lettered, and a handler type whose worker is gone is
// reported by the admin stats.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminClient, createClient, FairwayValidationError, type FairwayClient } from "@fairway/sdk";
import { sql } from "@fairway/store";
import { createWorker, type JobContext, type Worker } from "@fairway/worker";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
type Payloads = { "email.send": { to: string }; "report.build": { n: number }; "stuck.task": null };

let db: TestDb;
let server: ServerProcess;
let client: FairwayClient;
let worker: Worker;
const seen: Array<{ type: string; ctx: JobContext<unknown> }> = [];

beforeAll(async () => {
  db = await createTestDb();
  server = await startServerProcess({ DATABASE_URL: db.url, FAIRWAY_POLL_MS: "50" });
  const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
  const tenant = await admin.tenants.create({ name: "worker-test" });
  const { key } = await admin.tenants.createKey(tenant.id);
  client = createClient({ baseUrl: server.url, apiKey: key });
  worker = createWorker<Payloads>({
    databaseUrl: db.url,
    pollMs: 50,
    logLevel: "error",
    handlers: {
      "email.send": async (ctx) => {
        seen.push({ type: "email.send", ctx });
        expect(typeof ctx.payload.to).toBe("string"); // typed: ctx.payload is { to: string }
      },
      "report.build": async (ctx) => {
        seen.push({ type: "report.build", ctx });
        throw new Error(`report ${ctx.payload.n} failed`);
      },
      "stuck.task": () => new Promise(() => {}), // never settles and ignores its signal
    },
  });
  await worker.start();
});

afterAll(async () => {
  await worker?.stop(1000);
  await server?.stop();
  await db?.drop();
});

describe("createWorker", () => {
  it("runs a handler job created through the SDK with no target, exactly once, in the worker", async () => {
    const job = await client.jobs.create({
      name: "welcome",
      type: "email.send",
      schedule: { delayMs: 0 },
      payload: { to: "a@example.com" },
    });
    expect(job.target).toBeNull();
    const page = await until(
      () => client.jobs.triggers(job.id),
      (p) => p.data[0]?.status === "succeeded",
    );
    const trigger = await client.triggers.get(page.data[0].id);
    expect(trigger.attempts?.map((a) => a.outcome)).toEqual(["success"]);
    const runs = seen.filter((s) => s.ctx.jobId === job.id);
    expect(runs).toHaveLength(1);
    expect(runs[0].ctx.payload).toEqual({ to: "a@example.com" });
    expect(runs[0].ctx.attempt).toBe(1);
    expect(worker.stats.settled).toBeGreaterThanOrEqual(1);
  });

  it("retries a throwing handler and dead-letters it after maxAttempts", async () => {
    const job = await client.jobs.create({
      name: "report",
      type: "report.build",
      schedule: { delayMs: 0 },
      payload: { n: 7 },
      retry: { maxAttempts: 2, initialDelayMs: 0, maxDelayMs: 0 },
    });
    const page = await until(
      () => client.jobs.triggers(job.id),
      (p) => p.data[0]?.status === "dead",
    );
    const trigger = await client.triggers.get(page.data[0].id);
    expect(trigger.attempts?.map((a) => [a.outcome, a.error])).toEqual([
      ["handler_error", "report 7 failed"],
      ["handler_error", "report 7 failed"],
    ]);
    const dead = await client.deadLetters({ jobId: job.id });
    expect(dead.data.map((t) => t.id)).toEqual([trigger.id]);
  });

  it("ends an attempt at its timeout even when the handler ignores its signal", async () => {
    const job = await client.jobs.create({
      name: "stuck",
      type: "stuck.task",
      schedule: { delayMs: 0 },
      timeoutMs: 200,
      retry: { maxAttempts: 1 },
    });
    const page = await until(
      () => client.jobs.triggers(job.id),
      (p) => p.data[0]?.status === "dead",
    );
    expect((await client.triggers.get(page.data[0].id)).attempts?.map((a) => a.outcome)).toEqual(["timeout"]);
  });

  it("stops gracefully: a running handler finishes within the grace; one past it is released and runs again", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const started: number[] = [];
    const mk = (hang: boolean) =>
      createWorker<{ "slow.task": { n: number } }>({
        databaseUrl: db.url,
        pollMs: 50,
        logLevel: "error",
        handlers: {
          "slow.task": async (ctx) => {
            started.push(ctx.payload.n);
            if (!hang) return gate;
            await new Promise(() => {}); // ignores its signal: the worker still ends the attempt
          },
        },
      });
    // Within the grace: stop() waits for the handler, which then succeeds.
    const w1 = await mk(false).start();
    const a = await client.jobs.create({ name: "a", type: "slow.task", schedule: { delayMs: 0 }, payload: { n: 1 } });
    await until(
      async () => started.length,
      (n) => n === 1,
    );
    const stopped = w1.stop(20_000);
    open();
    await stopped;
    const ta = (await client.jobs.triggers(a.id)).data[0];
    expect((await client.triggers.get(ta.id)).attempts?.map((x) => x.outcome)).toEqual(["success"]);

    // Past the grace: aborted and released, not counted as an attempt; the next worker runs it.
    const w2 = await mk(true).start();
    const b = await client.jobs.create({ name: "b", type: "slow.task", schedule: { delayMs: 0 }, payload: { n: 2 } });
    await until(
      async () => started.length,
      (n) => n === 2,
    );
    await w2.stop(50);
    const released = (await client.jobs.triggers(b.id)).data[0];
    expect(released).toMatchObject({ status: "pending", attemptCount: 0 });
    const w3 = await mk(false).start();
    await until(
      () => client.triggers.get(released.id),
      (t) => t.status === "succeeded",
    );
    await w3.stop(1000);
    expect((await client.triggers.get(released.id)).attempts?.map((x) => x.outcome)).toEqual(["success"]);
    expect(started).toEqual([1, 2, 2]);
  });

  it("a worker killed mid-handler loses nothing: the lease expires, is reaped, and another worker runs it once", async () => {
    const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
    // The run timeout is longer than the test needs, so the attempt can only end by the lease expiring.
    await admin.pools.put("hang.task", { concurrency: 5, timeoutMs: 5000, leaseMs: 6000 });
    // One process (node --import tsx, not the tsx launcher, whose child would survive the kill).
    const child = spawn(process.execPath, ["--import", "tsx", "test/packages/fixtures/hanging-worker.ts"], {
      cwd: root,
      env: { PATH: process.env.PATH, DATABASE_URL: db.url },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    await until(
      async () => out,
      (o) => o.includes("ready"),
      60_000,
    );
    const job = await client.jobs.create({
      name: "hang",
      type: "hang.task",
      schedule: { delayMs: 0 },
      retry: { maxAttempts: 3, initialDelayMs: 0, maxDelayMs: 0 },
    });
    await until(
      async () => out,
      (o) => o.includes("running "),
    );
    const triggerId = /running (\S+)/.exec(out)![1];
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;

    const ran: string[] = [];
    const rescuer = await createWorker({
      databaseUrl: db.url,
      pollMs: 50,
      logLevel: "error",
      handlers: { "hang.task": (ctx) => void ran.push(ctx.triggerId) },
    }).start();
    const done = await until(
      () => client.triggers.get(triggerId),
      (t) => t.status === "succeeded",
      20_000,
    );
    await rescuer.stop(1000);
    expect(done.jobId).toBe(job.id);
    expect(done.attempts?.map((a) => a.outcome)).toEqual(["lease_expired", "success"]);
    expect(ran).toEqual([triggerId]);
  }, 90_000);

  it("refuses an untargeted job of a type no worker has registered", async () => {
    const err = await client.jobs
      .create({ name: "x", type: "nobody.serves", schedule: { delayMs: 0 } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(FairwayValidationError);
    expect(err.code).toBe("validation_error");
  });

  it("reports a handler type whose worker stopped heartbeating as unserved, with its due work", async () => {
    const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
    const before = await admin.stats();
    expect(before.handlerPools?.find((p) => p.type === "email.send")).toMatchObject({ served: true });
    // A worker that died an hour ago: its stamp is old and nothing claims its type.
    await worker.stop(1000);
    await db.store.db.execute(
      sql`UPDATE pools SET handler_seen_at = now() - interval '1 hour' WHERE type = 'email.send'`,
    );
    await client.jobs.create({
      name: "stuck",
      type: "email.send",
      schedule: { delayMs: 0 },
      payload: { to: "b@example.com" },
    });
    const after = await until(
      () => admin.stats(),
      (s) => (s.handlerPools?.find((p) => p.type === "email.send")?.due ?? 0) >= 1,
    );
    expect(after.handlerPools?.find((p) => p.type === "email.send")).toMatchObject({ served: false, due: 1 });
    // The server's own executor must not have run it: no webhook pool claims a handler type.
    expect(seen.filter((s) => (s.ctx.payload as { to?: string }).to === "b@example.com")).toHaveLength(0);
  });
});
