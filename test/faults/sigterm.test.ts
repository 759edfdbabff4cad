// SIGTERM, as a deploy sends it. The executor stops claiming, finishes what is in
// flight within its grace period or releases the rest, and leaves no lease behind; the server
// drains HTTP (refuses new connections, completes the requests it is serving) and exits 0.
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { maxLeasesHeld } from "../../packages/executor/src/pool.ts";
import postgres from "postgres";
import { query, sql } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startServerProcess } from "../support/server-process.ts";
import { killAll, startExecutorChild } from "./support/children.ts";
import { startHookReceiver, type HookReceiver } from "./support/hook-receiver.ts";
import { deliveryReport, statusCounts, until } from "./support/ledger.ts";

let db: TestDb;
let receiver: HookReceiver;

beforeAll(async () => {
  db = await createTestDb();
  receiver = await startHookReceiver();
  await seedTenant(db.store.db, "a", { maxInFlight: 100 });
});

// Each drill starts from no triggers, even when the one before it failed half-way.
afterEach(async () => {
  await db.store.db.execute(sql`DELETE FROM triggers`);
});

afterAll(async () => {
  await killAll();
  await receiver?.close();
  await db?.drop();
});

const leftover = () =>
  query<{ running: number; pendingTouched: number }>(
    db.store.db,
    sql`SELECT count(*) FILTER (WHERE status = 'running')::int AS running,
               count(*) FILTER (WHERE status = 'pending' AND attempt_count > 0)::int AS "pendingTouched"
          FROM triggers`,
  ).then((r) => r[0]);

it("finishes in-flight work within the grace period and claims nothing more", async () => {
  await seedPool(db.store.db, "work", 10, { leaseMs: 3000, timeoutMs: 2500 });
  const { triggerIds } = await seedDue(db.store.db, "a", 100, { type: "work", target: { url: `${receiver.url}/t/a` } });
  receiver.mode = { kind: "ok" };
  receiver.delayMs = 300;
  const ex = await startExecutorChild({ DATABASE_URL: db.url, OWNER: "deploy-1", GRACE_MS: "5000" });
  await receiver.waitFor((h) => h.length >= 15, 20_000, "work under way");
  const stats = await ex.stop();
  const counts = await statusCounts(db.store.db);
  console.log(JSON.stringify({ drill: "sigterm-finish", stats, counts }));
  // Started runs finish within the grace period; triggers claimed ahead but not started are given back.
  expect(stats!.settled + stats!.released).toBe(stats!.claimed);
  // Given back unstarted: what was queued ahead, plus a claim that was under way when stop() began.
  expect(stats!.released).toBeLessThanOrEqual(maxLeasesHeld(10));
  expect(counts.succeeded).toBe(stats!.settled);
  expect(counts.pending).toBe(100 - stats!.settled);
  expect(await leftover()).toEqual({ running: 0, pendingTouched: 0 });
  const report = deliveryReport(receiver.hits, triggerIds);
  expect(report.duplicates).toBe(0);
  expect(report.deliveries).toBe(stats!.settled);
  await db.store.db.execute(sql`DELETE FROM triggers`);
});

it("releases work that outlives the grace period: no lease left, no attempt counted", async () => {
  await seedPool(db.store.db, "work", 10, { leaseMs: 30_000, timeoutMs: 20_000 });
  await seedDue(db.store.db, "a", 10, { type: "work", target: { url: `${receiver.url}/t/a` } });
  receiver.mode = { kind: "hold" };
  const ex = await startExecutorChild({ DATABASE_URL: db.url, OWNER: "deploy-2", GRACE_MS: "300" });
  await receiver.waitFor(() => receiver.held === 10, 20_000, "runs in flight");
  const stats = await ex.stop();
  receiver.release();
  console.log(JSON.stringify({ drill: "sigterm-release", stats }));
  expect(stats).toMatchObject({ claimed: 10, settled: 0, released: 10 });
  expect(await statusCounts(db.store.db)).toEqual({ pending: 10 });
  expect(await leftover()).toEqual({ running: 0, pendingTouched: 0 });
  const [{ n }] = await query<{ n: number }>(
    db.store.db,
    sql`SELECT count(*)::int AS n FROM attempts WHERE trigger_id IN (SELECT id FROM triggers WHERE status = 'pending')`,
  );
  expect(n).toBe(0);
  await db.store.db.execute(sql`DELETE FROM triggers`);
});

it("server: drains HTTP (serves the open request, refuses new ones), releases leases, exits 0", async () => {
  await seedTenant(db.store.db, "b");
  await seedDue(db.store.db, "a", 5, { type: "work", target: { url: `${receiver.url}/t/a` } });
  receiver.mode = { kind: "hold" };
  const server = await startServerProcess({ DATABASE_URL: db.url, FAIRWAY_GRACE_MS: "300", FAIRWAY_POLL_MS: "50" });
  const locker = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    await receiver.waitFor(() => receiver.held === 5, 20_000, "server executor holding runs");
    // An API request that is provably in flight: it waits on a row lock we hold.
    let release!: () => void;
    const locked = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const tx = locker.begin(async (q) => {
      await q`SELECT 1 FROM tenants WHERE id = 'b' FOR UPDATE`;
      held();
      await locked;
    });
    // The lock is ours before the request is sent: sent earlier, the update could commit first and
    // never wait.
    await holding;
    const admin = { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" };
    const inFlight = fetch(`${server.url}/v1/admin/tenants/b`, {
      method: "PATCH",
      headers: admin,
      body: JSON.stringify({ weight: 3 }),
    });
    await until(
      () => query<{ n: number }>(db.store.db, sql`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`),
      (r) => r[0].n > 0,
      10_000,
      "API request waiting on the lock",
    );
    const exited = server.stop("SIGTERM");
    await until(
      () => server.output(),
      (o) => o.includes("draining"),
      10_000,
      "SIGTERM seen",
    );
    // New connections are refused while the open request is still being served.
    await until(
      () =>
        fetch(`${server.url}/healthz`).then(
          () => "served",
          () => "refused",
        ),
      (v) => v === "refused",
      5_000,
      "listener closed",
    );
    release();
    await tx;
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect((await res.json()).weight).toBe(3);
    expect(await exited).toBe(0);
    receiver.release();
    expect(await leftover()).toEqual({ running: 0, pendingTouched: 0 });
    expect(await statusCounts(db.store.db)).toEqual({ pending: 5 });
  } finally {
    await locker.end({ timeout: 1 });
    await server.stop("SIGKILL");
  }
});
