// The writes outside claim and settle on the distributed layout (docs/scaling.md): what the API and the
// executor's background passes write — creates, a job's lifecycle, the materializer, onBusy, retention,
// replays, a trigger's cancel and re-run, keys, secrets and channels — each statement on one tenant's
// shard group (EXPLAIN shows a router plan) and run for real on a Citus cluster, the queue in step
// with the triggers after each.
// Then the API end to end, the server migrated with the layout (FAIRWAY_DISTRIBUTE).
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSigningSecret, newId, silentLogger } from "@fairway/core";
import {
  busyPolicyTenants,
  connectPostgres,
  cancelJob,
  cancelTrigger,
  createJob,
  createJobs,
  createPlan,
  createTenant,
  DEFAULT_POOL,
  decideBusy,
  deleteKeyOverride,
  deletePlan,
  deleteSecret,
  dueCronTenants,
  getKeyInfo,
  listSecrets,
  materialize,
  pauseJob,
  putKeyOverride,
  putPool,
  putSecret,
  query,
  replayJobDeadLetters,
  replayTrigger,
  rerunOverride,
  rerunTrigger,
  resumeJob,
  revokePortalSessions,
  rotateSigningSecret,
  runJobNow,
  setKeyDefaults,
  setPoolPaused,
  sql,
  updateJob,
  updatePlan,
  updateTenant,
  type NewJob,
  type Store,
} from "@fairway/store";
import { createAdminClient, createClient, type FairwayClient } from "@fairway/sdk";
import { cancelBackfill, createBackfill } from "../../packages/store/src/sql/backfill.ts";
import { Materializer } from "../../packages/executor/src/materializer.ts";
import { Retention } from "../../packages/executor/src/retention.ts";
import { createCallOf, shardStatements } from "../../packages/store/src/sql/create-job.ts";
import { createDebounced } from "../../packages/store/src/sql/debounce.ts";
import { cancelPendingSql } from "../../packages/store/src/sql/job-lifecycle.ts";
import { dueJobsStatement, shardWrites } from "../../packages/store/src/sql/materialize.ts";
import { touchHandlerPools } from "../../packages/store/src/sql/handler-pools.ts";
import { createChannel, deleteChannel } from "../../packages/store/src/sql/notifications.ts";
import { busyStatement } from "../../packages/store/src/sql/on-busy.ts";
import {
  deleteExpiredJobs,
  deleteExpiredTriggers,
  deleteIdleKeys,
  deleteStaleFolds,
  expiredTriggersStatement,
} from "../../packages/store/src/sql/retention.ts";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";
import { startCitusCluster, type CitusCluster } from "./support/cluster.ts";
import { distributedStore, expectDelegated, expectSingleShard } from "./support/router.ts";

let cluster: CitusCluster;

beforeAll(async () => {
  cluster = await startCitusCluster(2);
}, 120_000);
afterAll(() => cluster?.stop());

const rows = <T = Record<string, unknown>>(store: Store, s: ReturnType<typeof sql>) => query<T>(store.db, s);

function newJob(tenantId: string, extra: Partial<NewJob> = {}): NewJob {
  return {
    id: newId("job"),
    tenantId,
    name: "j",
    type: "work",
    maxAttempts: 3,
    initialDelayMs: 10,
    maxDelayMs: 100,
    target: { url: "http://127.0.0.1:9/x" },
    ...extra,
  };
}

describe("writes on the distributed layout", () => {
  let store: Store;

  beforeAll(async () => {
    store = await distributedStore(cluster, "writes");
    await seedPool(store.db, "work");
    for (const t of ["acme", "globex", "initech"]) await seedTenant(store.db, t);
  }, 120_000);
  afterAll(() => store?.close());

  it("sends a tenant's creates to its node as one call of the create's function", async () => {
    await seedTenant(store.db, "umbrella");
    // Not due while this file runs: the API tests' executors claim every tenant's due work.
    const later = new Date(Date.now() + 3_600_000);
    // The first create makes the tenant's counter row (createJob, ensureCounter).
    const opts = { maxJobs: 10, poolKnown: true };
    expect((await createJob(store.db, newJob("umbrella", { runAt: later }), opts)).kind).toBe("created");
    const batch = [
      { job: newJob("umbrella", { runAt: later }), opts: { ...opts, idempotencyKey: "u1" } },
      { job: newJob("umbrella", { runAt: later }), opts: { ...opts, idempotencyKey: "u1" } },
      { job: newJob("umbrella", { runAt: later }), opts },
    ];
    const [row] = (await expectDelegated(
      store.db,
      cluster.url.replace(/\/postgres$/, "/writes"),
      createCallOf(batch),
    )) as Array<{ r: { lock: { live: number | null; held: string[] }; jobs: Array<{ id: string }> } }>;
    // The counter as the lock found it, and the two jobs admitted (the second u1 is the first's duplicate).
    expect(row!.r.lock).toEqual({ live: 1, held: [] });
    expect(row!.r.jobs.map((j) => j.id).sort()).toEqual([batch[0]!.job.id, batch[2]!.job.id].sort());
    expect(await rows(store, sql`SELECT live_jobs FROM tenant_counters WHERE tenant_id = 'umbrella'`)).toEqual([
      { live_jobs: 3 },
    ]);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("creates a tenant's jobs with statements on its shard group", async () => {
    const batch = [
      { job: newJob("acme", { runAt: new Date() }), opts: { maxJobs: 10, idempotencyKey: "k1" } },
      { job: newJob("acme", { runAt: new Date() }), opts: { maxJobs: 10, idempotencyKey: "k1" } },
      { job: newJob("acme", { cron: "* * * * *", timezone: "UTC", nextFireAt: new Date() }), opts: { maxJobs: 10 } },
    ];
    for (const s of Object.values(shardStatements(batch))) await expectSingleShard(store.db, s);

    // The tenant's first job (its counter row made on the way), a cron job, an Idempotency-Key replay,
    // and a type without a pool row (made first, by a statement of its own).
    const one = await createJob(store.db, newJob("acme", { runAt: new Date() }), { maxJobs: 3, poolKnown: true });
    expect(one.kind).toBe("created");
    const cron = await createJob(
      store.db,
      newJob("acme", { type: "fresh", cron: "* * * * *", timezone: "UTC", nextFireAt: new Date() }),
      { maxJobs: 3 },
    );
    expect(cron.kind).toBe("created");
    expect(await rows(store, sql`SELECT type FROM pools WHERE type = 'fresh'`)).toEqual([{ type: "fresh" }]);
    const keyed = newJob("acme", { runAt: new Date(Date.now() + 60_000) });
    const opts = { maxJobs: 3, poolKnown: true, idempotencyKey: "same", requestHash: "h" };
    expect((await createJob(store.db, keyed, opts)).kind).toBe("created");
    const again = await createJob(store.db, newJob("acme", { runAt: new Date() }), opts);
    expect(again).toMatchObject({ kind: "replayed", job: { id: keyed.id } });
    // At the limit: refused, nothing written.
    expect(
      (await createJob(store.db, newJob("acme", { runAt: new Date() }), { maxJobs: 3, poolKnown: true })).kind,
    ).toBe("max_jobs");
    // A batch: the creates of one tenant waiting for its statement go together.
    const many = await Promise.all(
      Array.from({ length: 6 }, () => createJob(store.db, newJob("globex", { runAt: new Date() }), { maxJobs: 4 })),
    );
    expect(many.map((r) => r.kind).sort()).toEqual([
      "created",
      "created",
      "created",
      "created",
      "max_jobs",
      "max_jobs",
    ]);

    const [acme] = await rows<{ jobs: number; triggers: number; live: number }>(
      store,
      sql`SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = 'acme') AS jobs,
                 (SELECT count(*)::int FROM triggers WHERE tenant_id = 'acme') AS triggers,
                 (SELECT live_jobs FROM tenant_counters WHERE tenant_id = 'acme') AS live`,
    );
    expect(acme).toEqual({ jobs: 3, triggers: 2, live: 3 });
    const [globex] = await rows<{ jobs: number; live: number }>(
      store,
      sql`SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = 'globex') AS jobs,
                 (SELECT live_jobs FROM tenant_counters WHERE tenant_id = 'globex') AS live`,
    );
    expect(globex).toEqual({ jobs: 4, live: 4 });
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("admits exactly up to maxJobs when two processes create at once, and answers each key once", async () => {
    await seedTenant(store.db, "racer");
    const other = connectPostgres(`postgres://postgres@127.0.0.1:${cluster.coordinator.port}/writes`);
    try {
      const race = Array.from({ length: 24 }, (_, i) =>
        createJob(i % 2 ? other.db : store.db, newJob("racer", { runAt: new Date() }), {
          maxJobs: 12,
          poolKnown: true,
          // Every third create repeats a key another create also sends.
          ...(i % 3 === 0 ? { idempotencyKey: `key-${i % 6}`, requestHash: "h" } : {}),
        }),
      );
      const kinds = (await Promise.all(race)).map((r) => r.kind);
      const [c] = await rows<{ jobs: number; live: number; triggers: number }>(
        store,
        sql`SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = 'racer') AS jobs,
                   (SELECT live_jobs FROM tenant_counters WHERE tenant_id = 'racer') AS live,
                   (SELECT count(*)::int FROM triggers WHERE tenant_id = 'racer') AS triggers`,
      );
      expect(c).toEqual({ jobs: 12, live: 12, triggers: 12 });
      expect(kinds.filter((k) => k === "created")).toHaveLength(12);
      expect(kinds.every((k) => k === "created" || k === "replayed" || k === "max_jobs")).toBe(true);
      expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    } finally {
      await other.close();
    }
  });

  it("debounces and backfills a tenant's jobs on its shard group", async () => {
    const now = new Date();
    const d = { key: "user-1", periodMs: 60_000, maxWaitMs: null, now, at: now, mode: "trailing" as const };
    const first = await createDebounced(store.db, newJob("initech"), { maxJobs: 100, poolKnown: true }, d);
    expect(first.kind).toBe("created");
    const folded = await createDebounced(store.db, newJob("initech"), { maxJobs: 100, poolKnown: true }, d);
    expect(folded).toMatchObject({ kind: "joined", job: { id: first.kind === "created" ? first.job.id : "" } });
    const cron = await createJob(
      store.db,
      newJob("initech", { cron: "0 * * * *", timezone: "UTC", nextFireAt: new Date(Date.now() + 3_600_000) }),
      { maxJobs: 100, poolKnown: true },
    );
    const jobId = cron.kind === "created" ? cron.job.id : "";
    const hours = [3, 2, 1].map((h) => new Date(Math.floor(Date.now() / 3_600_000 - h) * 3_600_000));
    const b = { tenantId: "initech", jobId, from: hours[0]!, to: new Date(hours[2]!.getTime() + 1), fires: hours };
    const made = await createBackfill(store.db, { ...b, overlap: "skip" });
    expect(made).toMatchObject({ fires: 3, skipped: 0, counts: { pending: 3 } });
    // Overlap skip: the instants already taken are left out.
    expect(await createBackfill(store.db, { ...b, overlap: "skip" })).toMatchObject({ fires: 3, skipped: 3 });
    expect(await cancelBackfill(store.db, "initech", made!.id)).toMatchObject({ cancelledNow: 3 });
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    await cancelJob(store.db, "initech", jobId);
    await cancelJob(store.db, "initech", first.kind === "created" ? first.job.id : "");
  });

  it("runs a job's lifecycle on its tenant's shard group", async () => {
    await expectSingleShard(store.db, cancelPendingSql("initech", "job_x", "paused"));
    const live = async () =>
      (
        await rows<{ live: number }>(
          store,
          sql`SELECT live_jobs AS live FROM tenant_counters WHERE tenant_id = 'initech'`,
        )
      )[0]?.live ?? 0;
    const before = await live();
    const created = await createJob(store.db, newJob("initech", { runAt: new Date(Date.now() + 60_000) }), {
      maxJobs: 100,
      poolKnown: true,
    });
    const id = created.kind === "created" ? created.job.id : "";
    const status = async () =>
      (
        await rows<{ status: string; reason: string | null }>(
          store,
          sql`SELECT status, reason FROM triggers WHERE tenant_id = 'initech' AND job_id = ${id} AND kind = 'scheduled'
               ORDER BY created_at`,
        )
      ).map((r) => `${r.status}:${r.reason}`);
    const at = new Date(Date.now() + 120_000);
    expect(await updateJob(store.db, "initech", id, { runAt: at, priority: 5, key: "k" }, new Date())).toMatchObject({
      priority: 5,
      key: "k",
    });
    expect(await status()).toEqual(["cancelled:rescheduled", "pending:null"]);
    expect((await pauseJob(store.db, "initech", id))?.status).toBe("paused");
    expect(await status()).toEqual(["cancelled:rescheduled", "cancelled:paused"]);
    expect((await resumeJob(store.db, "initech", id, new Date()))?.status).toBe("active");
    expect(await status()).toEqual(["cancelled:rescheduled", "pending:null"]);
    expect(await runJobNow(store.db, "initech", id, new Date())).toMatchObject({ kind: "manual", key: "k" });
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    expect((await cancelJob(store.db, "initech", id))?.status).toBe("cancelled");
    const left = await rows<{ n: number }>(
      store,
      sql`SELECT count(*)::int AS n FROM triggers WHERE tenant_id = 'initech' AND job_id = ${id} AND status = 'pending'`,
    );
    expect(left[0]!.n).toBe(0);
    expect(await live()).toBe(before);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("materializes each tenant's cron fires on its shard group, found by a read across the shards", async () => {
    for (const t of ["globex", "initech"]) {
      const r = await createJob(
        store.db,
        newJob(t, { cron: "* * * * * *", timezone: "UTC", nextFireAt: new Date(Date.now() - 2000), overlap: "skip" }),
        { maxJobs: 100, poolKnown: true },
      );
      expect(r.kind).toBe("created");
    }
    const now = new Date();
    const due = await dueCronTenants(store.db, now, 5000);
    expect(due.map((d) => d.tenantId)).toEqual(expect.arrayContaining(["acme", "globex", "initech"]));
    await expectSingleShard(store.db, dueJobsStatement(now, 5000, 500, "globex"));
    const fire = {
      id: "trg_x",
      tenant_id: "globex",
      job_id: "job_x",
      type: "work",
      scheduled_for: now.toISOString(),
      status: "pending",
      reason: null,
      priority: 0,
      max_attempts: 3,
      exclusive: true,
      overlap: "skip",
      key: null,
    };
    for (const s of shardWrites(
      "globex",
      [fire],
      [{ id: "job_x", next_fire_at: null }],
      [{ job_id: "job_x", before: now.toISOString(), reason: "misfire" }],
    ))
      await expectSingleShard(store.db, s);

    let fired = 0;
    for (const d of due) {
      const m = await materialize(store.db, now, 5000, 500, d.tenantId);
      expect(m.failed).toEqual([]);
      expect(m.ready.every((r) => r.tenantId === d.tenantId)).toBe(true);
      fired += m.fired;
    }
    expect(fired).toBeGreaterThan(0);

    const scheduled = await rows<{ tenant: string; n: number }>(
      store,
      sql`SELECT tenant_id AS tenant, count(*)::int AS n FROM triggers WHERE kind = 'scheduled' AND job_id IN
            (SELECT id FROM jobs WHERE cron IS NOT NULL) GROUP BY 1 ORDER BY 1`,
    );
    expect(scheduled.map((r) => r.tenant)).toEqual(["acme", "globex", "initech"]);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("runs the executor's materializer tenant by tenant: one tenant's failure leaves the others' fires", async () => {
    await seedTenant(store.db, "poison");
    await seedTenant(store.db, "healthy");
    // A schedule that cannot be computed (its zone is no zone) fails only its own tenant's pass, if at all.
    await createJob(
      store.db,
      newJob("poison", { cron: "* * * * * *", timezone: "Mars/Olympus", nextFireAt: new Date(Date.now() - 1000) }),
      { maxJobs: 10, poolKnown: true },
    );
    const ok = await createJob(
      store.db,
      newJob("healthy", { cron: "* * * * * *", timezone: "UTC", nextFireAt: new Date(Date.now() - 1000) }),
      { maxJobs: 10, poolKnown: true },
    );
    const materializer = new Materializer({
      db: store.db,
      ready: null,
      log: silentLogger,
      now: () => Date.now(),
      lookaheadMs: 2000,
      maxBackoffMs: 200,
      wakeClaims: () => {},
      wakeClaimsAt: () => {},
    });
    materializer.start();
    try {
      await until(
        () =>
          rows<{ n: number }>(
            store,
            sql`SELECT count(*)::int AS n FROM triggers WHERE tenant_id = 'healthy' AND job_id = ${ok.kind === "created" ? ok.job.id : ""}`,
          ),
        (r) => r[0]!.n >= 3,
        20_000,
        "the healthy tenant's fires",
      );
    } finally {
      await materializer.stop();
    }
    await store.db.execute(sql`UPDATE jobs SET status = 'paused' WHERE tenant_id IN ('poison', 'healthy')`);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("decides onBusy per tenant on its shard group", async () => {
    await expectSingleShard(store.db, busyStatement(new Date(), "globex"));
    const { jobId, triggerIds } = await seedDue(store.db, "globex", 3, { key: "busy" });
    await store.db.execute(sql`UPDATE jobs SET on_busy = 'skip' WHERE tenant_id = 'globex' AND id = ${jobId}`);
    // The key at its cap: one running (as a claim leaves it), the tenant's keys allowed one each.
    await store.db.execute(sql`UPDATE tenants SET key_max_in_flight = 1 WHERE id = 'globex'`);
    // (A claim moves its rows out of the queue and counts them itself: the queue's triggers do not.)
    await store.db.execute(sql`UPDATE triggers SET status = 'running', attempt_count = 1
                                WHERE tenant_id = 'globex' AND id = ${triggerIds[0]}`);
    await store.db.execute(sql`DELETE FROM trigger_queue WHERE tenant_id = 'globex' AND id = ${triggerIds[0]}`);
    await store.db.execute(sql`UPDATE tenant_keys SET running = running + 1, queued = queued - 1
                                WHERE tenant_id = 'globex' AND key = 'busy'`);
    await store.db.execute(
      sql`INSERT INTO tenant_pools AS tp (tenant_id, type, running) VALUES ('globex', 'work', 1)
          ON CONFLICT (tenant_id, type) DO UPDATE SET running = tp.running + 1`,
    );
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    expect(await busyPolicyTenants(store.db)).toEqual(["globex"]);
    expect(await decideBusy(store.db, new Date(), "globex")).toEqual({ skipped: 2, replaced: 0, cancelling: 0 });
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("replays a tenant's dead letters on its shard group", async () => {
    const { jobId, triggerIds } = await seedDue(store.db, "initech", 3);
    await store.db.execute(sql`UPDATE triggers SET status = 'dead', attempt_count = 3
                                WHERE tenant_id = 'initech' AND job_id = ${jobId}`);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    expect(await replayTrigger(store.db, "initech", triggerIds[0]!)).toEqual({ id: triggerIds[0] });
    expect(await replayTrigger(store.db, "acme", triggerIds[1]!)).toBeNull(); // another tenant's
    const all = await replayJobDeadLetters(store.db, "initech", jobId);
    expect(all).toMatchObject({ ids: triggerIds.slice(1).sort(), remaining: 0, type: "work" });
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("writes a tenant's key overrides, secrets and channels", async () => {
    expect((await putKeyOverride(store.db, "acme", "vip", { maxInFlight: 2 })).policy.maxInFlight).toBe(2);
    expect(await deleteKeyOverride(store.db, "acme", "vip")).toBe(true);
    expect((await getKeyInfo(store.db, "acme", "vip")).override).toBeNull();
    await putSecret(store.db, "acme", "TOKEN", "sealed-1", "k1");
    await putSecret(store.db, "acme", "TOKEN", "sealed-2", "k1");
    expect((await listSecrets(store.db, "acme")).map((s) => s.name)).toEqual(["TOKEN"]);
    expect(await deleteSecret(store.db, "acme", "TOKEN")).toBe(true);
    const channel = { id: newId("ch"), tenantId: "acme", type: "webhook" as const, url: "http://127.0.0.1:9/n" };
    const made = await createChannel(store.db, { ...channel, to: null, events: null, windowSeconds: 60 });
    expect(made).toMatchObject({ id: channel.id, tenantId: "acme" });
    await createChannel(store.db, { ...channel, id: newId("ch"), to: null, events: null, windowSeconds: 60 });
    expect(await deleteChannel(store.db, "acme", channel.id)).toBe(true);
    expect(await deleteChannel(store.db, "globex", made.id)).toBe(false);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("writes pools (a reference table: operators' writes and handler heartbeats)", async () => {
    await touchHandlerPools(store.db, ["handled"]);
    await touchHandlerPools(store.db, ["handled"]);
    expect((await setPoolPaused(store.db, "handled", true)).paused).toBe(true);
    expect((await putPool(store.db, { ...DEFAULT_POOL, type: "handled", concurrency: 7 })).concurrency).toBe(7);
    const [p] = await rows<{ paused: boolean; seen: boolean }>(
      store,
      sql`SELECT paused, handler_seen_at IS NOT NULL AS seen FROM pools WHERE type = 'handled'`,
    );
    expect(p).toEqual({ paused: true, seen: true });
  });

  it("deletes a tenant's expired history on its shard group", async () => {
    const now = new Date();
    await expectSingleShard(store.db, expiredTriggersStatement(now, 1000, null, "globex"));
    const { jobId } = await seedDue(store.db, "globex", 4, { at: new Date(Date.now() - 40 * 86_400_000) });
    await store.db.execute(sql`UPDATE triggers SET status = 'succeeded', finished_at = now() - interval '40 days'
                                WHERE tenant_id = 'globex' AND job_id = ${jobId}`);
    await store.db.execute(sql`UPDATE jobs SET status = 'completed', updated_at = now() - interval '40 days'
                                WHERE tenant_id = 'globex' AND id = ${jobId}`);
    // Another tenant's expired history is not this tenant's statement's to delete.
    const other = await seedDue(store.db, "initech", 2, { at: new Date(Date.now() - 40 * 86_400_000) });
    await store.db.execute(sql`UPDATE triggers SET status = 'succeeded', finished_at = now() - interval '40 days'
                                WHERE tenant_id = 'initech' AND job_id = ${other.jobId}`);
    expect(await deleteExpiredTriggers(store.db, now, 1000, null, "globex")).toMatchObject({ deleted: 4, found: 4 });
    expect(await deleteExpiredJobs(store.db, now, 1000, null, "globex")).toMatchObject({ deleted: 1 });
    await deleteIdleKeys(store.db, new Date(Date.now() + 400 * 86_400_000), 1000, "globex");
    expect(await deleteStaleFolds(store.db, now, 1000, null, "globex")).toMatchObject({ deleted: 0 });
    const left = await rows<{ tenant: string; n: number }>(
      store,
      sql`SELECT tenant_id AS tenant, count(*)::int AS n FROM triggers
           WHERE job_id IN (${jobId}, ${other.jobId}) GROUP BY 1`,
    );
    expect(left).toEqual([{ tenant: "initech", n: 2 }]);
    expect(await deleteExpiredTriggers(store.db, now, 1000, null, "initech")).toMatchObject({ deleted: 2 });
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("runs the executor's retention pass tenant by tenant", async () => {
    const { jobId } = await seedDue(store.db, "acme", 3, { at: new Date(Date.now() - 40 * 86_400_000) });
    await store.db.execute(sql`UPDATE triggers SET status = 'cancelled', finished_at = now() - interval '40 days'
                                WHERE tenant_id = 'acme' AND job_id = ${jobId}`);
    await store.db.execute(sql`UPDATE jobs SET status = 'cancelled', updated_at = now() - interval '40 days'
                                WHERE tenant_id = 'acme' AND id = ${jobId}`);
    const retention = new Retention({ db: store.db, now: () => Date.now(), log: silentLogger }, { pauseMs: 0 });
    const d = await retention.pass();
    expect(d.triggers).toBeGreaterThanOrEqual(3);
    expect(d.jobs).toBeGreaterThanOrEqual(1);
    expect(await rows(store, sql`SELECT id FROM jobs WHERE tenant_id = 'acme' AND id = ${jobId}`)).toEqual([]);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });
});

/** A store on `url` that records every statement it sends (postgres.js debug), to EXPLAIN each after. */
function recordingStore(url: string) {
  const sent: Array<{ text: string; params: unknown[] }> = [];
  const recorded = connectPostgres(url, { max: 4, debug: (_connection, text, params) => sent.push({ text, params }) });
  const db = recorded.db;
  // EXPLAIN goes through a client of its own, unrecorded, which sends a recorded time as it was given
  // ('-infinity' included).
  const asGiven = (x: unknown) => (x instanceof Date ? x.toISOString() : String(x));
  const explain = postgres(url, {
    max: 1,
    onnotice: () => {},
    types: { timestamptz: { to: 1184, from: [], serialize: asGiven, parse: (x: string) => x } },
  });
  return {
    db,
    sent,
    plan: async (text: string, params: unknown[]) =>
      (await explain.unsafe(`EXPLAIN ${text}`, params as never[])).map((r) => r["QUERY PLAN"] as string).join("\n"),
    close: () => Promise.all([recorded.close(), explain.end({ timeout: 5 })]),
  };
}

/** Statements that read no Fairway table: transaction control, and isDistributed()'s catalog reads. */
const NOT_ROUTED = /^\s*(begin|commit|rollback|savepoint|release)\b|pg_dist_partition|to_regclass|pg_catalog\.pg_type/i;

describe("every statement of a tenant's writes", () => {
  let store: Store;
  let rec: ReturnType<typeof recordingStore>;

  beforeAll(async () => {
    store = await distributedStore(cluster, "routed");
    await seedPool(store.db, "work");
    await seedTenant(store.db, "acme");
    rec = recordingStore(`postgres://postgres@127.0.0.1:${cluster.coordinator.port}/routed`);
  }, 120_000);
  afterAll(async () => {
    await rec?.close();
    await store?.close();
  });

  it("goes to the tenant's shard group alone: create, debounce, backfill, lifecycle, replay, cancel and re-run, keys, secrets, channels, the passes", async () => {
    const db = rec.db;
    const t = "acme";
    const opts = { maxJobs: 100, poolKnown: true };
    expect(
      await createTenant(db, { id: "routed-2", name: "R", signingSecret: generateSigningSecret() }),
    ).not.toBeNull();
    await updateTenant(db, "routed-2", { maxJobs: 50, ratePerSecond: 5 });
    await rotateSigningSecret(db, "routed-2", generateSigningSecret(), 60_000);
    await revokePortalSessions(db, "routed-2");
    await setKeyDefaults(db, t, { maxInFlight: 5, ratePerSecond: null, weight: 1 });
    const one = await createJob(db, newJob(t, { runAt: new Date(Date.now() + 60_000) }), {
      ...opts,
      idempotencyKey: "a",
    });
    const id = one.kind === "created" ? one.job.id : "";
    await createJob(db, newJob(t, { runAt: new Date() }), { ...opts, idempotencyKey: "a", requestHash: "x" });
    // A batch (POST /v1/jobs/batch): its statements in one transaction, on the shard group.
    await createJobs(db, [
      {
        job: newJob(t, { runAt: new Date(Date.now() + 60_000), tags: { env: "prod" } }),
        opts: { ...opts, idempotencyKey: "b" },
      },
      { job: newJob(t, { runAt: new Date(Date.now() + 60_000) }), opts: { ...opts, idempotencyKey: "b" } },
    ]);
    const d = {
      key: "k",
      periodMs: 60_000,
      maxWaitMs: null,
      now: new Date(),
      at: new Date(),
      mode: "trailing" as const,
    };
    await createDebounced(db, newJob(t), opts, d);
    await createDebounced(db, newJob(t), opts, d);
    await createDebounced(db, newJob(t), opts, { ...d, key: "lead", mode: "leading" });
    await createDebounced(db, newJob(t), opts, { ...d, key: "lead", mode: "leading" });
    const cron = await createJob(
      db,
      newJob(t, {
        cron: "* * * * * *",
        timezone: "UTC",
        nextFireAt: new Date(Date.now() - 1000),
        key: "k",
        onBusy: "skip",
      }),
      opts,
    );
    const cronId = cron.kind === "created" ? cron.job.id : "";
    const hour = new Date(Math.floor(Date.now() / 3_600_000 - 1) * 3_600_000);
    const bf = await createBackfill(db, {
      tenantId: t,
      jobId: cronId,
      from: hour,
      to: new Date(hour.getTime() + 1),
      overlap: "skip",
      fires: [hour],
    });
    await cancelBackfill(db, t, bf!.id);
    await updateJob(
      db,
      t,
      id,
      { runAt: new Date(Date.now() + 120_000), priority: 2, maxAttempts: 4, key: "k" },
      new Date(),
    );
    await updateJob(db, t, cronId, { overlap: "skip" }, new Date());
    await pauseJob(db, t, id);
    await resumeJob(db, t, id, new Date());
    await pauseJob(db, t, cronId);
    await resumeJob(db, t, cronId, new Date());
    await runJobNow(db, t, id, new Date());
    await materialize(db, new Date(), 3000, 500, t);
    await decideBusy(db, new Date(), t);
    await store.db.execute(sql`UPDATE triggers SET status = 'dead' WHERE tenant_id = ${t} AND job_id = ${id}`);
    const [dead] = await rows<{ id: string }>(
      store,
      sql`SELECT id FROM triggers WHERE tenant_id = ${t} AND status = 'dead' LIMIT 1`,
    );
    await replayTrigger(db, t, dead!.id);
    await store.db.execute(sql`UPDATE triggers SET status = 'dead' WHERE tenant_id = ${t} AND job_id = ${id}`);
    await replayJobDeadLetters(db, t, id);
    // One trigger: a cancel (the statements for a running one are sent for a pending one too), a
    // re-run of the cancelled trigger with an override, and the executor's read of it.
    const [pend] = await rows<{ id: string }>(
      store,
      sql`SELECT id FROM triggers WHERE tenant_id = ${t} AND status = 'pending' LIMIT 1`,
    );
    expect(await cancelTrigger(db, t, pend!.id)).toEqual({ kind: "cancelled", was: "pending" });
    const rerun = await rerunTrigger(db, t, pend!.id, { payload: { v: 2 } }, new Date());
    expect(rerun?.kind).toBe("created");
    expect(await rerunOverride(db, t, rerun?.kind === "created" ? rerun.id : "")).toEqual({ payload: { v: 2 } });
    await cancelJob(db, t, id);
    await putKeyOverride(db, t, "vip", { weight: 2 });
    await deleteKeyOverride(db, t, "vip");
    await putSecret(db, t, "S", "sealed", "k1");
    await deleteSecret(db, t, "S");
    const channel = await createChannel(db, {
      id: newId("ch"),
      tenantId: t,
      type: "webhook",
      url: "http://127.0.0.1:9/n",
      to: null,
      events: ["trigger.dead"],
      windowSeconds: 60,
    });
    await deleteChannel(db, t, channel.id);
    await deleteExpiredTriggers(db, new Date(), 1000, null, t);
    await deleteExpiredJobs(db, new Date(), 1000, null, t);
    await deleteIdleKeys(db, new Date(), 1000, t);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);

    const multi: string[] = [];
    let checked = 0;
    for (const { text, params } of rec.sent) {
      if (NOT_ROUTED.test(text)) continue;
      const plan = await rec.plan(text, params).catch((e: Error) => `EXPLAIN failed: ${e.message}`);
      checked++;
      if (!/Task Count: 1\b/.test(plan) || /Distributed Subplan/.test(plan)) multi.push(`${text}\n${plan}`);
    }
    expect(checked).toBeGreaterThan(40);
    expect(multi).toEqual([]);
  });
});

describe("the API end to end on the layout", () => {
  let server: ServerProcess;
  let store: Store;
  let client: FairwayClient;

  beforeAll(async () => {
    const url = await cluster.createDatabase("api");
    server = await startServerProcess({
      DATABASE_URL: url,
      FAIRWAY_DISTRIBUTE: "true",
      FAIRWAY_SECRETS_KEY: randomBytes(32).toString("base64"),
    });
    store = connectPostgres(url);
    const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
    const tenant = await admin.tenants.create({ id: "acme", name: "Acme" });
    expect(tenant.signingSecret).toMatch(/^whsec_/);
    expect((await admin.tenants.update("acme", { name: "Acme Inc" })).name).toBe("Acme Inc");
    client = createClient({ baseUrl: server.url, apiKey: (await admin.tenants.createKey("acme")).key });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await store?.close();
  });

  it("migrated the server's database with the layout", async () => {
    const [t] = await rows<{ kind: string }>(
      store,
      sql`SELECT citus_table_type AS kind FROM citus_tables WHERE table_name = 'triggers'::regclass`,
    );
    expect(t?.kind).toBe("distributed");
  });

  it("creates, changes, pauses, resumes and cancels jobs", async () => {
    const target = { url: "http://127.0.0.1:9/hook" };
    const once = await client.jobs.create({ name: "once", schedule: { delayMs: 60_000 }, target });
    expect(once).toMatchObject({ status: "active", type: "webhook" });
    const cron = await client.jobs.create({ name: "tick", schedule: { cron: "* * * * * *", timezone: "UTC" }, target });
    expect(cron.nextFireAt).not.toBeNull();
    const patched = await client.jobs.update(once.id, { name: "once-renamed", priority: 7 });
    expect(patched).toMatchObject({ name: "once-renamed", priority: 7 });
    expect((await client.jobs.pause(once.id)).status).toBe("paused");
    expect((await client.jobs.resume(once.id)).status).toBe("active");
    expect((await client.jobs.pause(cron.id)).status).toBe("paused");
    expect((await client.jobs.resume(cron.id)).status).toBe("active");
    expect(await client.jobs.run(cron.id)).toMatchObject({ kind: "manual", status: "pending" });
    expect((await client.jobs.delete(once.id)).status).toBe("cancelled");
    const debounce = { key: "user-1", periodMs: 60_000 };
    const first = await client.jobs.create({ name: "d", schedule: { delayMs: 0 }, target, debounce });
    const second = await client.jobs.create({ name: "d", schedule: { delayMs: 0 }, target, debounce });
    expect(second.id).toBe(first.id);
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const hourly = await client.jobs.create({ name: "hourly", schedule: { cron: "0 * * * *" }, target });
    const backfill = await client.jobs.backfill(hourly.id, {
      from: new Date(hour - 3 * 3_600_000).toISOString(),
      to: new Date(hour).toISOString(),
    });
    expect(backfill).toMatchObject({ fires: 3, skipped: 0 });
    // The cancel takes the fires still pending; the server's executors may have claimed some of these
    // past-due fires already: none is left pending, and the count is of those it cancelled.
    const { cancelled } = await client.backfills.cancel(backfill.id);
    const fires = await rows<{ status: string; claimed: boolean }>(
      store,
      sql`SELECT status, attempt_count > 0 AS claimed FROM triggers
           WHERE tenant_id = 'acme' AND backfill_id = ${backfill.id}`,
    );
    expect(fires).toHaveLength(3);
    expect(fires.filter((f) => f.status === "pending")).toEqual([]);
    expect(cancelled).toBe(fires.filter((f) => f.status === "cancelled").length);
    expect(fires.every((f) => f.status === "cancelled" || f.claimed)).toBe(true);
    const jobs = await rows<{ id: string; status: string; name: string }>(
      store,
      sql`SELECT id, status, name FROM jobs WHERE tenant_id = 'acme' AND id IN (${once.id}, ${cron.id}) ORDER BY name`,
    );
    expect(jobs.map((j) => [j.name, j.status])).toEqual([
      ["once-renamed", "cancelled"],
      ["tick", "active"],
    ]);
    // The server's materializer (tenant by tenant, on the layout) writes the every-second job's fires.
    await until(
      () =>
        rows<{ n: number }>(
          store,
          sql`SELECT count(*)::int AS n FROM triggers
               WHERE tenant_id = 'acme' AND job_id = ${cron.id} AND kind = 'scheduled'`,
        ),
      (r) => r[0]!.n >= 2,
      30_000,
      "the cron job's fires written by the server's materializer",
    );
    await client.jobs.pause(cron.id);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("replays a dead letter, and a job's dead letters", async () => {
    const job = await client.jobs.create({
      name: "bad",
      schedule: { delayMs: 3_600_000 },
      target: { url: "http://127.0.0.1:9/bad" },
    });
    const [t] = await rows<{ id: string }>(
      store,
      sql`SELECT id FROM triggers WHERE tenant_id = 'acme' AND job_id = ${job.id}`,
    );
    // Dead as a settle leaves it (delivery is the claim/settle helpers' part).
    await store.db.execute(sql`UPDATE triggers SET status = 'dead', attempt_count = 1, reason = 'http_400',
                                      finished_at = now() WHERE tenant_id = 'acme' AND id = ${t!.id}`);
    expect((await client.triggers.replay(t!.id)).status).toBe("pending");
    await store.db.execute(sql`UPDATE triggers SET status = 'dead', finished_at = now()
                                WHERE tenant_id = 'acme' AND id = ${t!.id}`);
    expect(await client.replayDeadLetters(job.id)).toMatchObject({ replayed: 1, remaining: 0 });
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("writes key overrides, secrets and notification channels", async () => {
    expect((await client.keys.put("vip", { maxInFlight: 2 })).policy.maxInFlight).toBe(2);
    expect((await client.keys.get("vip")).override).toEqual({ maxInFlight: 2 });
    await client.keys.delete("vip");
    expect((await client.keys.get("vip")).override).toBeNull();
    expect((await client.keyDefaults.update({ maxInFlight: 3 })).maxInFlight).toBe(3);
    expect((await client.secrets.put("TOKEN", "s3cret")).name).toBe("TOKEN");
    expect((await client.secrets.list()).data.map((s) => s.name)).toEqual(["TOKEN"]);
    await client.secrets.delete("TOKEN");
    expect((await client.secrets.list()).data).toEqual([]);
    const channel = await client.notificationChannels.create({ type: "webhook", url: "http://127.0.0.1:9/notify" });
    expect(channel).toMatchObject({ type: "webhook" });
    await client.notificationChannels.delete(channel.id);
  });

  // For the lead, after merging the reads helper's branch: the reads behind these writes' pages.
  it("reads back jobs, their triggers and dead letters (reads on the layout)", async () => {
    const job = await client.jobs.create({
      name: "read",
      schedule: { delayMs: 3_600_000 },
      target: { url: "http://127.0.0.1:9/r" },
    });
    expect((await client.jobs.get(job.id)).status).toBe("active");
    const [t] = (await client.jobs.triggers(job.id)).data;
    await store.db.execute(sql`UPDATE triggers SET status = 'dead', attempt_count = 1, finished_at = now()
                                WHERE tenant_id = 'acme' AND id = ${t!.id}`);
    expect((await client.deadLetters({ jobId: job.id })).data.map((d) => d.id)).toEqual([t!.id]);
    expect((await client.jobs.list()).data.map((j) => j.id)).toContain(job.id);
  });

  // For the lead, after merging the claim/settle helpers: the same server delivers on the layout.
  it("delivers a one-time job and records its attempt, re-runs it and cancels a running one (claim/settle on the layout)", async () => {
    const { startReceiver } = await import("../support/receiver.ts");
    const receiver = await startReceiver();
    try {
      const job = await client.jobs.create({
        name: "now",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/ok` },
      });
      await receiver.waitFor((ds) => ds.some((d) => d.path === "/ok"));
      const page = await until(
        () => client.jobs.triggers(job.id),
        (p) => p.data[0]?.status === "succeeded",
      );
      expect((await client.triggers.get(page.data[0]!.id)).attempts).toHaveLength(1);
      expect(await queueDrift(store.db)).toEqual(NO_DRIFT);

      // One trigger on the layout: a re-run with an edited payload is delivered with it; a running
      // request cancelled is cut at the receiver (the executor's poll per tenant) and not retried.
      const rerun = await client.triggers.rerun(page.data[0]!.id, { payload: { edited: true } });
      await receiver.waitFor((ds) => ds.some((d) => d.id === rerun.id));
      expect((receiver.deliveries.find((d) => d.id === rerun.id)!.body as { payload: unknown }).payload).toEqual({
        edited: true,
      });
      const slow = await client.jobs.create({
        name: "slow",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/slow/20000` },
      });
      await until(
        () => receiver.open.get("/slow/20000") ?? 0,
        (n) => n === 1,
        30_000,
      );
      const running = (await client.jobs.triggers(slow.id)).data[0]!;
      expect((await client.triggers.cancel(running.id)).status).toBe("cancelled");
      await until(
        () => receiver.cut,
        (cut) => cut.includes("/slow/20000"),
        30_000,
      );
      const after = await client.triggers.get(running.id);
      expect([after.status, after.attempts!.map((a) => a.outcome)]).toEqual(["cancelled", ["cancelled"]]);
      expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    } finally {
      await receiver.close();
    }
  });
});

describe("quota plans on the cluster", () => {
  let store: Store;
  beforeAll(async () => {
    store = await distributedStore(cluster, "plans");
  }, 120_000);
  afterAll(() => store?.close());

  it("plans is a reference table; a plan's change moves its tenants on every shard in one transaction; a plan in use stays", async () => {
    const [kind] = await rows<{ kind: string }>(
      store,
      sql`SELECT citus_table_type AS kind FROM citus_tables WHERE table_name = 'plans'::regclass`,
    );
    expect(kind?.kind).toBe("reference");
    const db = store.db;
    expect(await createPlan(db, { id: "pro", maxInFlight: 40, keyWeight: 3 })).not.toBeNull();
    // Enough tenants that both workers hold some.
    const ids = Array.from({ length: 8 }, (_, i) => `plan-t${i}`);
    for (const id of ids) {
      const own = id === "plan-t0" ? { maxInFlight: 2 } : {};
      const t = await createTenant(db, { id, name: id, planId: "pro", signingSecret: generateSigningSecret(), ...own });
      expect(t && t !== "unknown_plan" ? t.maxInFlight : null).toBe(id === "plan-t0" ? 2 : 40);
    }
    const nodes = await rows<{ n: number }>(
      store,
      sql`SELECT count(DISTINCT nodeport)::int AS n FROM citus_shards WHERE table_name = 'tenants'::regclass
           AND shardid IN (SELECT get_shard_id_for_distribution_column('tenants', id) FROM tenants WHERE plan_id = 'pro')`,
    );
    expect(nodes[0]?.n).toBe(2);
    const out = await updatePlan(db, "pro", () => ({ maxInFlight: 9, keyWeight: null }));
    expect(out?.tenants).toBe(ids.length);
    const after = await rows<{ id: string; m: number; kw: number }>(
      store,
      sql`SELECT id, max_in_flight AS m, key_weight AS kw FROM tenants WHERE plan_id = 'pro' ORDER BY id`,
    );
    expect(after.map((r) => [r.id, r.m, r.kw])).toEqual(ids.map((id) => [id, id === "plan-t0" ? 2 : 9, 1]));
    expect(await updateTenant(db, "plan-t1", { planId: "nope" })).toBe("unknown_plan");
    expect(await deletePlan(db, "pro")).toEqual({ inUse: ids.length });
    for (const id of ids) await updateTenant(db, id, { planId: null });
    expect(await deletePlan(db, "pro")).toBe("deleted");
    expect((await rows(store, sql`SELECT max_in_flight AS m FROM tenants WHERE id = 'plan-t1'`))[0]).toEqual({ m: 10 });
  });
});
