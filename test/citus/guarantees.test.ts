// The guarantees of docs/guarantees.md on a Citus cluster (a coordinator and two workers the file
// starts), with executors delivering to a real receiver on the distributed layout: caps exact across
// executors, weighted shares, kill -9 of an executor, a worker node down, no deadlock under a mixed
// workload, a rebalance onto a new node.
// Each drill has a database of its own on the cluster.
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { createMemoryCoordinator } from "@fairway/coord";
import { Executor, type ExecutorOptions } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { newId } from "@fairway/core";
import { query, sql, type Db, type Store } from "@fairway/store";
import { startExecutorChild, killAll } from "../faults/support/children.ts";
import { startHookReceiver, type Hit, type HookReceiver } from "../faults/support/hook-receiver.ts";
import { deliveryReport, leasesHeld, statusCounts } from "../faults/support/ledger.ts";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { mixedWorkload } from "../support/mixed-workload.ts";
import { startReceiver } from "../support/receiver.ts";
import { seedPool, seedTenant } from "../support/seed.ts";
import { until } from "../support/until.ts";
import { startCitusCluster, type CitusCluster } from "./support/cluster.ts";
import { distributedStore } from "./support/router.ts";

let cluster: CitusCluster;
let receiver: HookReceiver;
/** Each drill's database, dropped after it (a worker added later joins only those left). */
const databases: Array<{ name: string; store: Store }> = [];
const stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  cluster = await startCitusCluster(2);
  receiver = await startHookReceiver();
}, 120_000);
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  await killAll();
  receiver.hits.length = 0;
  receiver.maxOpen.clear();
  receiver.mode = { kind: "ok" };
  receiver.delayMs = 0;
  for (const { name, store } of databases.splice(0)) {
    await store.close();
    await cluster.dropDatabase(name);
  }
});
afterAll(async () => {
  await receiver?.close();
  await cluster?.stop();
});

async function database(name: string): Promise<{ store: Store; db: Db; url: string }> {
  const store = await distributedStore(cluster, name);
  databases.push({ name, store });
  const url = `postgres://postgres@127.0.0.1:${cluster.coordinator.port}/${name}`;
  return { store, db: store.db, url };
}

/** `count` executors sharing one in-process coordinator (wake-ups and the ready index), polling and
 *  reaping fast; stopped after the test. */
function executors(db: Db, count: number, extra: Partial<ExecutorOptions> = {}): Executor[] {
  const coordinator = createMemoryCoordinator();
  return Array.from({ length: count }, () => {
    const transport = createUndiciTransport({ allowPrivate: true });
    const e = new Executor({
      db,
      transport,
      allowPrivateTargets: true,
      wake: coordinator,
      readyIndex: coordinator,
      pollMs: 20,
      reapEveryMs: 200,
      poolRefreshMs: 500,
      ...extra,
    }).start();
    stops.push(async () => {
      await e.stop(5_000);
      await transport.close();
    });
    return e;
  });
}

/** A job of `tenant` with `count` triggers, the k-th due `stepMs` × k after `from`, delivered to the
 *  receiver at /t/<tenant>. Returns the trigger ids in due order. */
async function seedSpread(
  db: Db,
  tenant: string,
  count: number,
  opts: { from?: number; stepMs?: number; type?: string } = {},
): Promise<string[]> {
  const type = opts.type ?? "work";
  const jobId = newId("job");
  const from = opts.from ?? Date.now() - 1000;
  const target = JSON.stringify({ url: `${receiver.url}/t/${tenant}` });
  await db.execute(sql`
    INSERT INTO jobs (id, tenant_id, name, type, run_at, target, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at)
    VALUES (${jobId}, ${tenant}, 'spread', ${type}, now(), ${target}::jsonb, 5, 100, 1000, now())`);
  const ids = Array.from({ length: count }, () => newId("trg"));
  await db.execute(sql`
    INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts)
    SELECT x.id, ${tenant}, ${jobId}, ${type}, 'manual', t.at, t.at, 5
      FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) WITH ORDINALITY AS x(id, k)
     CROSS JOIN LATERAL (SELECT to_timestamp((${from}::float8 + (x.k - 1) * ${opts.stepMs ?? 0}) / 1000) AS at) t`);
  return ids;
}

/** The worker port that holds `tenant`'s shard group. */
async function nodeOf(db: Db, tenant: string): Promise<number> {
  const [row] = await query<{ port: number }>(
    db,
    sql`SELECT nodeport AS port FROM citus_shards
         WHERE shardid = get_shard_id_for_distribution_column('tenants', ${tenant}::text)`,
  );
  return row!.port;
}

/** Attempt rows exactly 1..attempt_count for every trigger that ran (joined on the tenant: a colocated
 *  read on the layout). */
async function attemptAnomalies(db: Db): Promise<unknown[]> {
  return query(
    db,
    sql`SELECT t.id FROM triggers t LEFT JOIN attempts a ON a.tenant_id = t.tenant_id AND a.trigger_id = t.id
         WHERE t.status IN ('succeeded', 'dead', 'pending')
         GROUP BY t.tenant_id, t.id, t.attempt_count
        HAVING count(a.attempt) <> t.attempt_count OR count(DISTINCT a.attempt) <> count(a.attempt)`,
  );
}

const allSucceeded = (db: Db, total: number, ms = 60_000) =>
  until(
    () => statusCounts(db),
    (c) => c.succeeded === total,
    ms,
    `all ${total} triggers succeeded`,
  );

it("keeps every tenant at or under its cap across three executors", async () => {
  const { db } = await database("caps");
  await seedPool(db, "work", 20);
  const caps: Record<string, number> = { capped3: 3, capped5: 5, open: 1000 };
  const ids: string[] = [];
  for (const [tenant, cap] of Object.entries(caps)) {
    await seedTenant(db, tenant, { maxInFlight: cap });
    ids.push(...(await seedSpread(db, tenant, 120)));
  }
  receiver.delayMs = 30;
  executors(db, 3);
  await allSucceeded(db, ids.length);
  const report = deliveryReport(receiver.hits, ids);
  console.info(JSON.stringify({ drill: "citus-caps", ...report, maxOpen: Object.fromEntries(receiver.maxOpen) }));
  expect(report.lost).toBe(0);
  expect(report.duplicates).toBe(0);
  expect(receiver.maxOpen.get("capped3")).toBe(3);
  expect(receiver.maxOpen.get("capped5")).toBe(5);
  expect(await queueDrift(db)).toEqual(NO_DRIFT);
  expect(await attemptAnomalies(db)).toEqual([]);
  const [{ running }] = await query<{ running: number }>(
    db,
    sql`SELECT coalesce(sum(running), 0)::int AS running FROM tenant_pools`,
  );
  expect(running).toBe(0);
});

it("gives backlogged tenants their weighted share of the pool", async () => {
  const { db } = await database("shares");
  await seedPool(db, "work", 8);
  await seedTenant(db, "light", { maxInFlight: 1000, weight: 1 });
  await seedTenant(db, "heavy", { maxInFlight: 1000, weight: 3 });
  const ids = [...(await seedSpread(db, "light", 300)), ...(await seedSpread(db, "heavy", 300))];
  receiver.delayMs = 20;
  executors(db, 1);
  await receiver.waitFor((h) => h.length >= 400, 60_000, "400 deliveries");
  // Every prefix of the arrival order from the 40th on: the heavy tenant's share against its 3/4.
  const arrivals = [...receiver.hits].sort((a, b) => a.at - b.at).slice(0, 400);
  let heavy = 0;
  let worst = 0;
  arrivals.forEach((h: Hit, i) => {
    if (h.tenant === "heavy") heavy++;
    if (i >= 39) worst = Math.max(worst, Math.abs(heavy - ((i + 1) * 3) / 4));
  });
  console.info(JSON.stringify({ drill: "citus-shares", heavyOf400: heavy, worstPrefixLag: worst }));
  // The bound on a cluster is looser than on one PostgreSQL: each tenant's claim is its own round trip,
  // and a pass whose claims come back unevenly leaves the pool a stretch of one tenant's triggers
  // (docs/scaling.md). Weights ignored would give the heavy tenant 200 of 400.
  expect(Math.abs(heavy - 300)).toBeLessThanOrEqual(30);
  expect(worst).toBeLessThanOrEqual(45);
  await allSucceeded(db, ids.length);
});

it("kill -9 of an executor loses nothing: its leases are reaped and re-run", async () => {
  const { db, url } = await database("kill9");
  await seedTenant(db, "a", { maxInFlight: 1000 });
  await seedTenant(db, "b", { maxInFlight: 1000 });
  await seedPool(db, "work", 40, { leaseMs: 2000, timeoutMs: 1500 });
  const ids = [...(await seedSpread(db, "a", 100)), ...(await seedSpread(db, "b", 100))];
  receiver.mode = { kind: "hold" };
  const victim = await startExecutorChild({ DATABASE_URL: url, OWNER: "victim" });
  await receiver.waitFor(() => receiver.held === 40, 30_000, "the victim holding a full pool");
  const held = new Set(receiver.hits.map((h) => h.id));
  victim.signal("SIGKILL");
  expect(await victim.exited).toBe(null);
  const leased = await leasesHeld(db, "victim");
  expect(leased).toBeGreaterThanOrEqual(40);

  receiver.mode = { kind: "ok" };
  const [survivor] = executors(db, 1);
  await allSucceeded(db, ids.length);
  const report = deliveryReport(receiver.hits, ids);
  const dupIds = new Set(
    receiver.hits.filter((h, i) => receiver.hits.findIndex((x) => x.id === h.id) !== i).map((h) => h.id),
  );
  console.info(JSON.stringify({ drill: "citus-kill9", ...report, leased, reaped: survivor!.stats.reaped }));
  expect(report.lost).toBe(0);
  expect(report.foreign).toBe(0);
  // Only runs in flight at the kill are delivered twice; the rest of the victim's leases ran once.
  expect(report.duplicates).toBeLessThanOrEqual(40);
  for (const id of dupIds) expect(held.has(id)).toBe(true);
  expect(survivor!.stats.reaped).toBe(leased);
  expect(await queueDrift(db)).toEqual(NO_DRIFT);
  expect(await attemptAnomalies(db)).toEqual([]);
});

it("a worker down stalls only its own tenants, which resume when it returns", async () => {
  const { db } = await database("down");
  await seedPool(db, "work", 20, { leaseMs: 3000 });
  const [down, up] = cluster.workers;
  const on: Record<number, string[]> = { [down!.port]: [], [up!.port]: [] };
  for (let i = 0; on[down!.port]!.length < 3 || on[up!.port]!.length < 3; i++) {
    const tenant = `t${i}`;
    await seedTenant(db, tenant, { maxInFlight: 1000 });
    on[await nodeOf(db, tenant)]!.push(tenant);
  }
  const tenantsDown = new Set(on[down!.port]!);
  // Due over 20 s from 1 s on: a steady flow, half of it on each node, that outlasts the outage window
  // below however long the start takes.
  const start = Date.now() + 1000;
  const due = new Map<string, number>();
  const tenantOf = new Map<string, string>();
  const ids: string[] = [];
  for (const tenant of [...on[down!.port]!, ...on[up!.port]!]) {
    const list = await seedSpread(db, tenant, 100, { from: start, stepMs: 200 });
    for (const [k, id] of list.entries()) {
      due.set(id, start + k * 200);
      tenantOf.set(id, tenant);
    }
    ids.push(...list);
  }
  executors(db, 2);
  await until(
    () => Promise.resolve(receiver.hits.length),
    (n) => n > 50,
    20_000,
    "deliveries flowing",
  );
  down!.stop();
  const stoppedAt = Date.now();
  // Let the connections to it fail, then watch a window with it down.
  await new Promise((r) => setTimeout(r, 1500));
  const windowStart = Date.now();
  await new Promise((r) => setTimeout(r, 4000));
  const windowEnd = Date.now();
  down!.start();
  const inWindow = receiver.hits.filter((h) => h.at >= windowStart && h.at < windowEnd);
  const stalled = inWindow.filter((h) => tenantsDown.has(h.tenant));
  const going = inWindow.filter((h) => !tenantsDown.has(h.tenant));
  // What the other node's tenants had due in the window (3 tenants × one every 200 ms for 4 s).
  const dueInWindow = [...due].filter(
    ([id, at]) => at >= windowStart && at < windowEnd && !tenantsDown.has(tenantOf.get(id)!),
  ).length;
  // The other node's tenants were delivered on time while it was down: fire lag of what came due in
  // the window (a trigger is delivered at most once late by a claim cycle and a delivery).
  const lags = going.filter((h) => due.get(h.id)! >= windowStart).map((h) => h.at - due.get(h.id)!);
  lags.sort((a, b) => a - b);
  const p95 = lags[Math.floor(lags.length * 0.95)] ?? 0;

  await allSucceeded(db, ids.length, 90_000);
  const report = deliveryReport(receiver.hits, ids);
  const firstBack = receiver.hits.filter((h) => tenantsDown.has(h.tenant) && h.at >= windowEnd).map((h) => h.at);
  console.info(
    JSON.stringify({
      drill: "citus-node-down",
      ...report,
      downFor: windowEnd - stoppedAt,
      windowDelivered: { stalledTenants: stalled.length, otherTenants: going.length, otherTenantsDue: dueInWindow },
      fireLagP95Ms: p95,
      resumedAfterMs: firstBack.length ? Math.min(...firstBack) - windowEnd : null,
    }),
  );
  expect(stalled.length).toBe(0);
  // They kept going: at least half of it arrived in the window.
  expect(dueInWindow).toBeGreaterThanOrEqual(30);
  expect(going.length).toBeGreaterThanOrEqual(dueInWindow / 2);
  expect(p95).toBeLessThan(2000);
  expect(report.lost).toBe(0);
  // A run in flight on the down node's tenants whose settle could not be written is re-run after its
  // lease: duplicates only among those tenants, at most the pools' slots.
  const dups = receiver.hits.filter((h, i) => receiver.hits.findIndex((x) => x.id === h.id) !== i);
  for (const h of dups) expect(tenantsDown.has(h.tenant)).toBe(true);
  expect(report.duplicates).toBeLessThanOrEqual(40);
  expect(await queueDrift(db)).toEqual(NO_DRIFT);
  expect(await attemptAnomalies(db)).toEqual([]);
}, 180_000);

it("a mixed workload for half a minute: no deadlock, distributed or on a worker", async () => {
  // Citus reports a distributed deadlock by cancelling one transaction ("…involved in a distributed
  // deadlock") and a worker's own as Postgres does: neither may appear in what any component logged or
  // any call failed with (support mixed-workload.ts).
  const { db } = await database("deadlocks");
  const hooks = await startReceiver();
  try {
    const r = await mixedWorkload(db, hooks, 30_000);
    console.log(JSON.stringify({ drill: "deadlocks", layout: "citus", ...r }));
    expect(r.deliveries).toBeGreaterThan(200);
    expect(r.deadlocks).toEqual([]);
  } finally {
    await hooks.close();
  }
}, 150_000);

it("rebalances onto a new worker while executors deliver: nothing lost, duplicates only from reaped leases", async () => {
  const { db } = await database("rebalance");
  await seedPool(db, "work", 20, { leaseMs: 3000 });
  const tenants = Array.from({ length: 12 }, (_, i) => `r${i}`);
  const ids: string[] = [];
  const start = Date.now() + 500;
  for (const tenant of tenants) {
    await seedTenant(db, tenant, { maxInFlight: 1000 });
    ids.push(...(await seedSpread(db, tenant, 80, { from: start, stepMs: 100 })));
  }
  const runners = executors(db, 2);
  await until(
    () => Promise.resolve(receiver.hits.length),
    (n) => n > 50,
    20_000,
    "deliveries flowing",
  );
  const added = await cluster.addWorker();
  await db.execute(sql`SELECT citus_rebalance_start()`);
  await db.execute(sql`SELECT citus_rebalance_wait()`);
  const [{ n: moved }] = await query<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM citus_shards WHERE nodeport = ${added.port} AND table_name = 'triggers'::regclass`,
  );
  await allSucceeded(db, ids.length, 120_000);
  const report = deliveryReport(receiver.hits, ids);
  const reaped = runners.reduce((n, e) => n + e.stats.reaped, 0);
  console.info(JSON.stringify({ drill: "citus-rebalance", ...report, shardsMoved: moved, reaped }));
  expect(moved).toBeGreaterThan(0);
  expect(report.lost).toBe(0);
  expect(report.duplicates).toBeLessThanOrEqual(reaped);
  expect(await queueDrift(db)).toEqual(NO_DRIFT);
  expect(await attemptAnomalies(db)).toEqual([]);
}, 150_000);
