// The settle side of the hot path on the distributed layout (docs/scaling.md): a tenant's settle, the
// attempt records that follow it, renewals, releases, the at-most-once mark, a cancelled run and the
// cancel poll each go to the tenant's shard alone (EXPLAIN shows one task, no subplan), and run for
// real on a cluster the test starts: attempts recorded, running counts and the queue in step with the
// triggers, dead letters listed, a fenced-out write changing nothing, the reaper taking expired leases
// and a lost executor's leases cut so that it takes them at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "@fairway/core";
import { query, sql, type Db, type Settlement, type Store } from "@fairway/store";
import { dropSpentLeases, expireLostExecutors, findExpiredLeases } from "../../packages/store/src/layout/ops.ts";
import { cutLeasesStatement, heartbeat } from "../../packages/store/src/sql/executors.ts";
import { NOTIFICATION_POOL, notificationJobId } from "../../packages/store/src/sql/notifications.ts";
import {
  cancelRequested,
  cancelRequestedStatement,
  settleCancelled,
  settleCancelledStatements,
} from "../../packages/store/src/sql/on-busy.ts";
import { releaseLeases, releaseStatement } from "../../packages/store/src/sql/release.ts";
import { renewLeases, renewStatement } from "../../packages/store/src/sql/renew.ts";
import { markSending, sendingStatement } from "../../packages/store/src/sql/sending.ts";
import { settleIn } from "../../packages/store/src/sql/delegated.ts";
import { settleStatements } from "../../packages/store/src/sql/settle.ts";
import { oneTenant } from "../../packages/store/src/layout/scope.ts";
import { reapExpired } from "../../packages/executor/src/reaper.ts";
import { Settler } from "../../packages/executor/src/settler.ts";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { seedDue, seedPool, seedTenant, succeeded } from "../support/seed.ts";
import { settleCall } from "../../packages/store/src/sql/delegated.ts";
import { startCitusCluster, type CitusCluster } from "./support/cluster.ts";
import { distributedStore, expectDelegated, expectSingleShard, planOf } from "./support/router.ts";

/** One tenant's settle, as the per-tenant layout writes it. */
const settle = (db: Db, items: Settlement[], tenantId: string) => settleIn(db, items, oneTenant(tenantId));

let cluster: CitusCluster;
let store: Store;
let db: Db;

beforeAll(async () => {
  cluster = await startCitusCluster(2);
  store = await distributedStore(cluster, "settle");
  db = store.db;
  await seedPool(db, "work");
}, 180_000);
afterAll(async () => {
  await store?.close();
  await cluster?.stop();
});

interface Held {
  id: string;
  tenantId: string;
  leaseToken: string;
  attempt: number;
}

/** What a claim of `ids` for one tenant leaves (claim.ts): running under one lease, out of the queue,
 *  counted in the tenant's pool and key (unless on standby), a lease row at the tenant. */
async function claimFor(
  tenantId: string,
  ids: string[],
  opts: { owner?: string; leaseMs?: number; standby?: boolean; key?: string | null } = {},
): Promise<Held[]> {
  const token = newId("lse");
  const list = `{${ids.join(",")}}`;
  const leaseMs = opts.leaseMs ?? 60_000;
  const standby = opts.standby ?? false;
  await db.execute(sql`
    UPDATE triggers SET status = 'running', attempt_count = attempt_count + 1, lease_token = ${token},
           lease_owner = ${opts.owner ?? "test"}, standby = ${standby},
           lease_expires_at = now() + make_interval(secs => ${leaseMs}::float8 / 1000)
     WHERE tenant_id = ${tenantId} AND id = ANY (${list}::text[])`);
  await db.execute(sql`DELETE FROM trigger_queue WHERE tenant_id = ${tenantId} AND id = ANY (${list}::text[])`);
  if (!standby)
    await db.execute(sql`
      INSERT INTO tenant_pools AS tp (tenant_id, type, running) VALUES (${tenantId}, 'work', ${ids.length})
      ON CONFLICT (tenant_id, type) DO UPDATE SET running = tp.running + excluded.running`);
  if (opts.key)
    await db.execute(sql`
      UPDATE tenant_keys SET queued = queued - ${ids.length}, running = running + ${standby ? 0 : ids.length}
       WHERE tenant_id = ${tenantId} AND key = ${opts.key}`);
  await db.execute(sql`
    INSERT INTO leases (token, tenant_id, owner, expires_at, trigger_ids)
    VALUES (${token}, ${tenantId}, ${opts.owner ?? "test"},
            now() + make_interval(secs => ${leaseMs}::float8 / 1000), ${list}::text[])`);
  const rows = await query<{ id: string; attempt: number }>(
    db,
    sql`SELECT id, attempt_count AS attempt FROM triggers WHERE tenant_id = ${tenantId} AND id = ANY (${list}::text[])`,
  );
  return rows.map((r) => ({ id: r.id, tenantId, leaseToken: token, attempt: r.attempt }));
}

/** A notification channel of the tenant and its notifications job (notifications.ts, createChannel). */
async function addChannel(tenantId: string): Promise<void> {
  await db.execute(sql`INSERT INTO pools (type) VALUES (${NOTIFICATION_POOL}) ON CONFLICT DO NOTHING`);
  await db.execute(sql`
    INSERT INTO jobs (id, tenant_id, name, type, status, max_attempts, initial_delay_ms, max_delay_ms)
    VALUES (${notificationJobId(tenantId)}, ${tenantId}, 'notifications', ${NOTIFICATION_POOL}, 'system', 5, 5000, 600000)`);
  await db.execute(sql`
    INSERT INTO notification_channels (id, tenant_id, type, url, window_seconds)
    VALUES (${newId("chn")}, ${tenantId}, 'webhook', 'https://example.com/hook', 60)`);
}

const status = async (tenantId: string, id: string) =>
  (
    await query<{ status: string; attempt: number; token: string | null; standby: boolean }>(
      db,
      sql`SELECT status, attempt_count AS attempt, lease_token AS token, standby FROM triggers
           WHERE tenant_id = ${tenantId} AND id = ${id}`,
    )
  )[0]!;

const attempts = async (tenantId: string, id: string) =>
  query<{ attempt: number; outcome: string; detail: unknown }>(
    db,
    sql`SELECT attempt, outcome, detail FROM attempts WHERE tenant_id = ${tenantId} AND trigger_id = ${id} ORDER BY attempt`,
  );

const failed = (h: Held, extra: Partial<Settlement>): Settlement =>
  succeeded(h, { status: "pending", outcome: "http_error", httpStatus: 500, error: "HTTP 500", ...extra });

describe("a tenant's statements are single-shard", () => {
  const h = { id: "trg_a", tenantId: "acme", leaseToken: "lse_a", attempt: 1 };
  const detail = { request: null, responseHeaders: { "content-type": "text/plain" }, responseTruncated: false };
  const batches: Record<string, Settlement[]> = {
    success: [succeeded(h)],
    "a success with its detail": [succeeded(h, { detail })],
    retry: [failed(h, { nextAttemptAt: new Date() })],
    "a dead letter": [failed({ ...h, attempt: 3 }, { status: "dead", reason: "max_attempts" })],
    "a success handing its slot to a standby successor": [
      succeeded(h, { successor: { id: "trg_b", leaseToken: "lse_b", attempt: 1 } }),
    ],
    "the reaper's": [failed(h, { outcome: "lease_expired", httpStatus: null, reap: true, nextAttemptAt: new Date() })],
  };

  for (const [name, items] of Object.entries(batches)) {
    it(`settles ${name}`, async () => {
      const s = settleStatements(items, "acme");
      // The settle and its attempt records; a dead letter's notifications follow.
      const notifying = items[0]!.status === "dead" ? 2 : 0;
      const settling = s.statements.slice(0, s.statements.length - notifying);
      for (const statement of settling) await expectSingleShard(db, statement);
      // The notifications' first statement inserts in its CTEs (notifications, their triggers, the
      // folds), which Citus runs as steps of their own: each step on the tenant's shard group alone.
      const [notify, rewind] = s.statements.slice(s.statements.length - notifying);
      if (notify) {
        const plan = await planOf(db, notify);
        const tasks = [...plan.matchAll(/Task Count: (\d+)/g)].map((m) => Number(m[1]));
        expect(tasks.length, plan).toBeGreaterThan(0);
        expect(
          tasks.every((n) => n === 1),
          plan,
        ).toBe(true);
        await expectSingleShard(db, rewind!);
      }
    });
  }

  it("renews, releases, marks sending, polls and records a cancelled run", async () => {
    const leases = [{ id: "trg_a", leaseToken: "lse_a" }];
    await expectSingleShard(db, renewStatement(leases, 30_000, "acme"));
    await expectSingleShard(db, releaseStatement(leases, "acme"));
    await expectSingleShard(db, sendingStatement(h, "acme"));
    await expectSingleShard(db, cancelRequestedStatement(["trg_a", "trg_b"], "acme"));
    for (const statement of settleCancelledStatements(h, new Date(), 5, "cancelled", "acme"))
      await expectSingleShard(db, statement);
    await expectSingleShard(db, cutLeasesStatement("acme", [{ token: "lse_a", ids: ["trg_a"] }]));
  });
});

describe("on the cluster", () => {
  beforeAll(async () => {
    for (const t of ["acme", "globex"]) await seedTenant(db, t);
    await addChannel("acme");
  });

  it("records a success, a retry and a dead letter, and keeps the queue in step", async () => {
    const { triggerIds: ids } = await seedDue(db, "acme", 4, { maxAttempts: 3 });
    const [ok, retry, dead, detailed] = await claimFor("acme", ids);
    const detail = { request: null, responseHeaders: { "x-a": "1" }, responseTruncated: false };
    const rows = await settle(
      db,
      [
        succeeded(ok!),
        failed(retry!, { nextAttemptAt: new Date(Date.now() + 60_000) }),
        failed(dead!, { status: "dead", reason: "max_attempts" }),
        succeeded(detailed!, { detail }),
      ],
      "acme",
    );
    expect(rows.filter((r) => !r.notification).map((r) => [r.id, r.status])).toEqual(
      expect.arrayContaining([
        [ok!.id, "succeeded"],
        [retry!.id, "pending"],
        [dead!.id, "dead"],
        [detailed!.id, "succeeded"],
      ]),
    );
    // The dead letter notified the tenant's channel: a notification and its trigger, in the settle's transaction.
    expect(rows.filter((r) => r.notification)).toHaveLength(1);
    expect(await attempts("acme", ok!.id)).toEqual([{ attempt: 1, outcome: "success", detail: null }]);
    expect(await attempts("acme", retry!.id)).toMatchObject([{ attempt: 1, outcome: "http_error" }]);
    expect(await attempts("acme", dead!.id)).toMatchObject([{ attempt: 1, outcome: "http_error" }]);
    expect(await attempts("acme", detailed!.id)).toMatchObject([{ attempt: 1, outcome: "success", detail }]);
    const [letters] = await query<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM dead_letters WHERE tenant_id = 'acme' AND trigger_id = ${dead!.id}`,
    );
    expect(letters!.n).toBe(1);
    const [made] = await query<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM notifications WHERE tenant_id = 'acme' AND event = 'trigger.dead'`,
    );
    expect(made!.n).toBe(1);
    expect(await queueDrift(db)).toEqual(NO_DRIFT);

    // Again, as a retried write after the first committed: fenced, nothing changes, nothing counted twice.
    expect(await settle(db, [succeeded(ok!), failed(retry!, {})], "acme")).toEqual([]);
    expect(await attempts("acme", retry!.id)).toHaveLength(1);
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
  });

  it("folds a second dead letter of the job, pauses a job at its failure limit and reports its recovery", async () => {
    const { triggerIds } = await seedDue(db, "acme", 3, { maxAttempts: 1 });
    const [one, two, three] = await claimFor("acme", triggerIds);
    const dead = (h: Held) => failed(h, { status: "dead", reason: "max_attempts" });
    // Within the channel's window: folded, no second notification.
    const first = await settle(db, [dead(one!)], "acme");
    expect(first.filter((r) => r.notification)).toHaveLength(1);
    const second = await settle(db, [dead(two!)], "acme");
    expect(second.filter((r) => r.notification)).toHaveLength(0);
    const [fold] = await query<{ folded: number; tenantId: string }>(
      db,
      sql`SELECT folded, tenant_id AS "tenantId" FROM notification_folds WHERE tenant_id = 'acme' AND event = 'trigger.dead'
           AND subject = (SELECT job_id FROM triggers WHERE tenant_id = 'acme' AND id = ${one!.id})`,
    );
    expect(fold).toEqual({ folded: 1, tenantId: "acme" });
    // Its streak is two; a success of the failing job ends it: job.recovered.
    const recovered = await settle(db, [succeeded(three!, { recover: true })], "acme");
    expect(recovered.filter((r) => r.notification)).toHaveLength(1);
    const [job] = await query<{ streak: number }>(
      db,
      sql`SELECT failure_streak AS streak FROM jobs WHERE tenant_id = 'acme'
           AND id = (SELECT job_id FROM triggers WHERE tenant_id = 'acme' AND id = ${one!.id})`,
    );
    expect(job!.streak).toBe(0);

    // A tenant whose limit is one failure: its job pauses at the first dead letter, its queued trigger
    // is cancelled as a pause would, and job.paused goes out with trigger.dead.
    await seedTenant(db, "initech");
    await db.execute(sql`UPDATE tenants SET consecutive_failure_limit = 1 WHERE id = 'initech'`);
    await addChannel("initech");
    const p = await seedDue(db, "initech", 2, { maxAttempts: 1 });
    const [failing] = await claimFor("initech", [p.triggerIds[0]!]);
    const made = await settle(db, [dead(failing!)], "initech");
    expect(made.filter((r) => r.notification)).toHaveLength(2);
    const [paused] = await query<{ status: string; reason: string }>(
      db,
      sql`SELECT status, pause_reason AS reason FROM jobs WHERE tenant_id = 'initech' AND id = ${p.jobId}`,
    );
    expect(paused).toEqual({ status: "paused", reason: "consecutive_failures" });
    expect(await status("initech", p.triggerIds[1]!)).toMatchObject({ status: "cancelled" });
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
  });

  it("the settler writes each tenant's results in a transaction of its own: one failing holds no other back", async () => {
    const a = await seedDue(db, "acme", 2);
    const g = await seedDue(db, "globex", 1);
    const acme = await claimFor("acme", a.triggerIds);
    const [globex] = await claimFor("globex", g.triggerIds);
    const settled: string[] = [];
    const errors: unknown[] = [];
    const settler = new Settler({
      db,
      now: Date.now,
      onSettled: (rows) => settled.push(...rows.map((r) => r.id)),
      onError: (err) => errors.push(err),
    });
    for (const h of acme) settler.add({ ...succeeded(h), tenantId: "acme" }, Date.now() + 60_000);
    // A result no statement can record (its attempt has no duration): globex's transaction fails, and
    // is given up at once here (its lease would expire and the reaper take it).
    settler.add({ ...failed(globex!, { durationMs: Number.NaN }), tenantId: "globex" }, Date.now() - 1);
    await settler.flush();
    expect(settled.sort()).toEqual([...a.triggerIds].sort());
    expect(errors).toHaveLength(1);
    expect(await status("globex", globex!.id)).toMatchObject({ status: "running" });
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
    expect(await settle(db, [succeeded(globex!)], "globex")).toHaveLength(1);
  });

  it("changes nothing for a lease fenced out (a wrong token)", async () => {
    const { triggerIds } = await seedDue(db, "globex", 1);
    const [held] = await claimFor("globex", triggerIds);
    expect(await settle(db, [succeeded({ ...held!, leaseToken: "lse_stale" })], "globex")).toEqual([]);
    expect(await renewLeases(db, [{ id: held!.id, leaseToken: "lse_stale" }], 30_000, oneTenant("globex"))).toEqual(
      new Set(),
    );
    expect(await markSending(db, { ...held!, leaseToken: "lse_stale" }, "globex")).toBe(false);
    expect(await status("globex", held!.id)).toMatchObject({ status: "running", token: held!.leaseToken });
    expect(await attempts("globex", held!.id)).toEqual([]);
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
    expect(await releaseLeases(db, [held!], oneTenant("globex"))).toBe(1);
    expect(await status("globex", held!.id)).toMatchObject({ status: "pending", attempt: 0 });
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
  });

  it("settles a keyed trigger: its key's running count and worker time", async () => {
    const { triggerIds } = await seedDue(db, "globex", 1, { key: "user-1" });
    const [held] = await claimFor("globex", triggerIds, { key: "user-1" });
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
    expect(await settle(db, [succeeded(held!, { durationMs: 40 })], "globex")).toHaveLength(1);
    const [key] = await query<{ running: number; workMs: number }>(
      db,
      sql`SELECT running, work_ms AS "workMs" FROM tenant_keys WHERE tenant_id = 'globex' AND key = 'user-1'`,
    );
    expect(key).toMatchObject({ running: 0 });
    expect(key!.workMs).toBeGreaterThan(0);
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
  });

  it("sends a tenant's settle to its node as one call of its function", async () => {
    const { triggerIds } = await seedDue(db, "globex", 2);
    const held = await claimFor("globex", triggerIds);
    const call = settleCall([succeeded(held[0]!), failed(held[1]!, { nextAttemptAt: new Date() })], "globex");
    const [row] = (await expectDelegated(
      db,
      `postgres://postgres@127.0.0.1:${cluster.coordinator.port}/settle`,
      call.statement,
    )) as Array<{ r: string }>;
    expect(
      call
        .decode(row!.r)
        .map((r) => r.status)
        .sort(),
    ).toEqual(["pending", "succeeded"]);
    expect(await attempts("globex", held[1]!.id)).toMatchObject([{ attempt: 1, outcome: "http_error" }]);
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
  });

  it("hands a settled run's slot to a standby successor", async () => {
    const { triggerIds } = await seedDue(db, "globex", 2);
    const [first] = await claimFor("globex", [triggerIds[0]!]);
    const [next] = await claimFor("globex", [triggerIds[1]!], { standby: true });
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
    const rows = await settle(db, [succeeded(first!, { successor: next! })], "globex");
    expect(rows.map((r) => r.id)).toEqual([first!.id]);
    expect(await status("globex", next!.id)).toMatchObject({ status: "running", standby: false });
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
    expect(await settle(db, [succeeded(next!)], "globex")).toHaveLength(1);
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
  });

  it("renews a tenant's leases and their lease row, and marks an at-most-once run sending", async () => {
    const { triggerIds } = await seedDue(db, "acme", 2, { delivery: "at_most_once" });
    const held = await claimFor("acme", triggerIds, { leaseMs: 1_000 });
    expect(await renewLeases(db, held, 120_000, oneTenant("acme"))).toEqual(new Set(triggerIds));
    const [lease] = await query<{ left: number }>(
      db,
      sql`SELECT extract(epoch FROM expires_at - now())::float8 AS left FROM leases
           WHERE tenant_id = 'acme' AND token = ${held[0]!.leaseToken}`,
    );
    expect(lease!.left).toBeGreaterThan(60);
    expect(await markSending(db, held[0]!, "acme")).toBe(true);
    expect(
      await settle(
        db,
        held.map((h) => succeeded(h)),
        "acme",
      ),
    ).toHaveLength(2);
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
  });

  it("records a run cancelled for a newer one of its key", async () => {
    const { triggerIds } = await seedDue(db, "acme", 1, { key: "user-9" });
    const [held] = await claimFor("acme", triggerIds, { key: "user-9" });
    await db.execute(sql`UPDATE triggers SET cancel_requested = true WHERE tenant_id = 'acme' AND id = ${held!.id}`);
    expect(await cancelRequested(db, [held!.id], oneTenant("acme"))).toEqual([held!.id]);
    expect(await settleCancelled(db, held!, new Date(), 5, "cancelled", oneTenant("acme"))).toBe(true);
    expect(await status("acme", held!.id)).toMatchObject({ status: "cancelled" });
    expect(await attempts("acme", held!.id)).toMatchObject([{ attempt: 1, outcome: "cancelled" }]);
    expect(await settleCancelled(db, held!, new Date(), 5, "cancelled", oneTenant("acme"))).toBe(false);
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
  });

  it("reaps expired leases per tenant, and cuts a lost executor's leases for the reaper to take", async () => {
    const a = await seedDue(db, "acme", 2);
    const g = await seedDue(db, "globex", 1);
    await claimFor("acme", a.triggerIds, { leaseMs: -1_000 });
    await claimFor("globex", g.triggerIds, { leaseMs: -1_000 });
    const expired = await findExpiredLeases(db);
    expect(expired.map((e) => e.id).sort()).toEqual([...a.triggerIds, ...g.triggerIds].sort());
    const reaped = await reapExpired(db, Date.now());
    expect(reaped.map((r) => [r.id, r.status]).sort()).toEqual(
      [...a.triggerIds, ...g.triggerIds].map((id) => [id, "pending"]).sort(),
    );
    expect(await attempts("acme", a.triggerIds[0]!)).toMatchObject([{ attempt: 1, outcome: "lease_expired" }]);
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
    // The spent lease rows went with the pass (dropSpentLeases, per shard group).
    const [spent] = await query<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM leases WHERE expires_at <= now()`,
    );
    expect(spent!.n).toBe(0);
    expect(await dropSpentLeases(db)).toBe(0);

    // An executor silent past its timeout: lost, its leases (a minute still to run) cut to now.
    const owner = newId("exe");
    await heartbeat(db, {
      id: owner,
      host: "h",
      pid: 1,
      version: "0",
      startedAt: new Date(),
      heartbeatTimeoutMs: 1_000,
      pools: {},
    });
    await db.execute(sql`UPDATE executors SET heartbeat_at = now() - interval '1 minute' WHERE id = ${owner}`);
    const b = await seedDue(db, "acme", 2);
    const c = await seedDue(db, "globex", 1);
    await claimFor("acme", b.triggerIds, { owner });
    await claimFor("globex", c.triggerIds, { owner });
    expect(await findExpiredLeases(db)).toEqual([]);
    expect(await expireLostExecutors(db)).toEqual({ lost: [owner], cut: 3 });
    const taken = await reapExpired(db, Date.now());
    expect(taken.map((r) => r.id).sort()).toEqual([...b.triggerIds, ...c.triggerIds].sort());
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
    // Again: nothing left to cut.
    expect(await expireLostExecutors(db)).toEqual({ lost: [], cut: 0 });
  });
});
