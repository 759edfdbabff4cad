// retention-under-load — what deleting expired history costs the work next to it. One database is
// seeded with N expired finished triggers (most succeeded at once, some after a failed attempt, some
// dead past their own period, with their attempt rows and dead letters) over cron jobs and finished
// one-time jobs, plus the `throughput` scenario's due work; each arm runs on its own copy of it
// (CREATE DATABASE … TEMPLATE), so the tables are the same size in both. The `throughput` workload
// then runs in rounds (the same number in both arms) with the retention loop deleting next to it, and
// without; the headline is the ratio of the two rates and the claim tick (each claim's round trip) in
// both. The retention arm goes on until everything expired is gone: the time to delete it all, and the
// share of it deleted while the load ran. RETENTION_SHARE (default the loop's own, 0.2) sets the share of
// its time the retention loop may spend in Postgres (1: batches back to back).
import { randomBytes } from "node:crypto";
import { silentLogger } from "@fairway/core";
import { Retention } from "@fairway/executor";
import { connectPostgres, query, sql, type Db } from "@fairway/store";
import { plannerDefaultsFor } from "@fairway/store/node";
import { urlFor, withAdmin, type TestDb } from "../../../test/support/pg.ts";
import { benchDb } from "../lib/db.ts";
import { runExecutorUntil } from "../lib/fairway.ts";
import { inTurn, type BenchContext, type Scenario } from "../lib/scenario.ts";
import { seedTenants, seedTriggers, setPool, waitUntil } from "../lib/seed.ts";
import { percentile } from "../lib/stats.ts";

const TENANTS = 100;
const CONCURRENCY = 1000;

export interface Size {
  /** Expired finished triggers. */
  expired: number;
  /** Of those, the triggers of finished one-time jobs (one each). */
  oneTime: number;
  /** Due triggers the throughput workload runs. */
  due: number;
}

/** Expired history, as Fairway writes it: ids older than any live trigger's, 40 days finished (the
 *  default historyRetentionDays is 30), dead ones 100 days (deadRetentionDays 90). Per 100 triggers:
 *  90 first-attempt successes (kept in the trigger's row, no attempt row), 8 successes after one
 *  failed attempt (one attempt row), 2 dead after three (three attempt rows, a dead letter). */
async function seedExpired(db: Db, tenants: string[], s: Size): Promise<void> {
  const cron = s.expired - s.oneTime;
  // Cron fires: the same number for each tenant's cron job, a second apart.
  await db.execute(sql`
    INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, status, attempt_count, max_attempts,
                          next_attempt_at, created_at, updated_at, finished_at, reason,
                          ok_started_at, ok_duration_ms)
    SELECT 'trg_000c' || lpad(g::text, 10, '0'), x.tenant, 'job_' || x.tenant, 'noop', 'scheduled', d.at,
           h.status, h.attempts, 3, d.at, d.at, d.fin, d.fin, h.reason,
           CASE WHEN h.attempts = 1 THEN d.at END, CASE WHEN h.attempts = 1 THEN 1 END
      FROM generate_series(0, ${cron - 1}::int) g,
           LATERAL (SELECT (${JSON.stringify(tenants)}::jsonb ->> (g % ${tenants.length}::int)) AS tenant) x,
           LATERAL (SELECT CASE WHEN g % 100 < 90 THEN 'succeeded' WHEN g % 100 < 98 THEN 'succeeded' ELSE 'dead' END AS status,
                           CASE WHEN g % 100 < 90 THEN 1 WHEN g % 100 < 98 THEN 2 ELSE 3 END AS attempts,
                           CASE WHEN g % 100 >= 98 THEN 'exhausted' END AS reason) h,
           LATERAL (SELECT now() - interval '100 days' - (g / ${tenants.length}::int) * interval '1 second' AS at) a,
           LATERAL (SELECT a.at AS at, CASE WHEN h.status = 'dead' THEN a.at ELSE now() - interval '40 days' END AS fin) d`);
  // Finished one-time jobs, each with its one trigger (a first-attempt success).
  if (s.oneTime > 0) {
    await db.execute(sql`
      INSERT INTO jobs (id, tenant_id, name, type, run_at, max_attempts, initial_delay_ms, max_delay_ms, status, created_at, updated_at)
      SELECT 'job_0o' || lpad(g::text, 10, '0'), ${JSON.stringify(tenants)}::jsonb ->> (g % ${tenants.length}::int),
             'once', 'noop', now() - interval '41 days', 3, 10, 1000, 'completed',
             now() - interval '41 days', now() - interval '40 days'
        FROM generate_series(0, ${s.oneTime - 1}::int) g`);
    await db.execute(sql`
      INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, status, attempt_count, max_attempts,
                            next_attempt_at, created_at, updated_at, finished_at, ok_started_at, ok_duration_ms)
      SELECT 'trg_000o' || lpad(g::text, 10, '0'), j.tenant_id, j.id, 'noop', 'scheduled', j.run_at, 'succeeded', 1, 3,
             j.run_at, j.run_at, j.updated_at, j.updated_at, j.run_at, 1
        FROM generate_series(0, ${s.oneTime - 1}::int) g JOIN jobs j ON j.id = 'job_0o' || lpad(g::text, 10, '0')`);
  }
  // The failed attempts of the cron fires that did not succeed at once.
  await db.execute(sql`
    INSERT INTO attempt_log (trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, http_status, error, created_at)
    SELECT t.id, t.tenant_id, n, t.scheduled_for, 1,
           CASE WHEN n = t.attempt_count AND t.status = 'succeeded' THEN 'success' ELSE 'http_error' END,
           CASE WHEN n = t.attempt_count AND t.status = 'succeeded' THEN 200 ELSE 500 END,
           CASE WHEN n = t.attempt_count AND t.status = 'succeeded' THEN NULL ELSE 'HTTP 500' END, t.finished_at
      FROM triggers t, generate_series(1, t.attempt_count) n
     WHERE t.id LIKE 'trg_000c%' AND t.attempt_count > 1`);
}

export async function expiredLeft(db: Db): Promise<number> {
  const [r] = await query<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM triggers WHERE id < 'trg_001'`);
  return r.n;
}

async function oneTimeJobsLeft(db: Db): Promise<number> {
  const [r] = await query<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM jobs WHERE id LIKE 'job_0o%'`);
  return r.n;
}

/** The seeded database every arm copies. */
export async function seeded(ctx: BenchContext, s: Size): Promise<TestDb> {
  const tdb = await benchDb(4);
  const db = tdb.store.db;
  const t0 = performance.now();
  const tenants = await seedTenants(db, { prefix: "t", count: TENANTS, maxInFlight: 100_000 }, "noop");
  await setPool(db, "noop", CONCURRENCY);
  await seedExpired(db, tenants, s);
  await seedTriggers(db, tenants, s.due / TENANTS, "noop");
  await db.execute(sql`VACUUM ANALYZE`);
  const [c] = await query<{ attempts: number; dead: number }>(
    db,
    sql`SELECT (SELECT count(*)::int FROM attempt_log) AS attempts, (SELECT count(*)::int FROM dead_letters) AS dead`,
  );
  ctx.log(
    `seeded ${await expiredLeft(db)} expired triggers (${c.attempts} attempt rows, ${c.dead} dead letters) and ${s.due} due in ${Math.round((performance.now() - t0) / 1000)} s`,
  );
  await tdb.store.close();
  return tdb;
}

/** A copy of the seeded database (its store closed first: a template may have no connections). */
export async function copyOf(template: TestDb, max = 10): Promise<TestDb> {
  const name = `fairway_t_${randomBytes(6).toString("hex")}`;
  await withAdmin(async (a) => {
    await a.unsafe(`CREATE DATABASE ${name} TEMPLATE ${template.name}`);
    for (const s of plannerDefaultsFor(name)) await a.unsafe(s);
  });
  const store = connectPostgres(urlFor(name), { max });
  return {
    name,
    url: urlFor(name),
    store,
    async drop() {
      await store.close();
      await withAdmin((a) => a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

interface ArmResult {
  /** Triggers per second over all rounds' timed drains. */
  perS: number;
  claims: number[];
  deleteS?: number;
  deletedDuringLoad?: number;
}

/** `rounds` times: make `s.due` triggers due (untimed; the first round's are in the seed) and drain
 *  them with a fresh executor (timed). With `retention`, the retention loop (its own connections, as
 *  another executor's would be) deletes from just before the first round until nothing expired is left. */
async function arm(
  template: TestDb,
  s: Size,
  rounds: number,
  retention: boolean,
  ctx: BenchContext,
): Promise<ArmResult> {
  const tdb = await copyOf(template);
  const rdb = retention ? connectPostgres(tdb.url, { max: 2 }) : null;
  try {
    const db = tdb.store.db;
    const tenants = Array.from({ length: TENANTS }, (_, i) => `t${String(i).padStart(5, "0")}`);
    const claims: number[] = [];
    let r: Retention | null = null;
    let deleteStarted = 0;
    if (rdb) {
      r = new Retention(
        { db: rdb.db, now: Date.now, log: silentLogger },
        { everyMs: 3_600_000, share: process.env.RETENTION_SHARE ? Number(process.env.RETENTION_SHARE) : undefined },
      );
      deleteStarted = performance.now();
      r.start();
    }
    let timedMs = 0;
    for (let i = 0; i < rounds; i++) {
      if (i > 0) await seedTriggers(db, tenants, s.due / TENANTS, "noop");
      const { ms } = await runExecutorUntil({
        db,
        handlers: { noop: async () => {} },
        settled: s.due,
        timeoutMs: 300_000,
        observer: { claimed: (_pool, ms, n) => void (n > 0 && claims.push(ms)) },
        retention: { everyMs: 0 },
      });
      timedMs += ms;
    }
    const out: ArmResult = { perS: ((s.due * rounds) / timedMs) * 1000, claims };
    if (r) {
      out.deletedDuringLoad = s.expired - (await expiredLeft(db));
      await waitUntil(
        async () => (await expiredLeft(db)) === 0 && (await oneTimeJobsLeft(db)) === 0,
        1_800_000,
        "every expired trigger and finished one-time job deleted",
        500,
      );
      out.deleteS = (performance.now() - deleteStarted) / 1000;
      await r.stop();
      ctx.log(
        `deleted ${s.expired} expired triggers in ${out.deleteS.toFixed(1)} s (${out.deletedDuringLoad} while the load ran)`,
      );
    }
    return out;
  } finally {
    await rdb?.close();
    await tdb.drop();
  }
}

export const retentionUnderLoad: Scenario = {
  name: "retention-under-load",
  title: "the throughput workload while retention deletes expired history, vs without",
  headline: {
    label: "retention",
    keys: ["ratio_with_vs_without", "claim_ms_p50_with", "claim_ms_p99_with", "claim_ms_p99_without", "delete_s"],
  },
  async run(ctx: BenchContext) {
    const s: Size = ctx.quick
      ? { expired: 20_000, oneTime: 2_000, due: 5_000 }
      : { expired: 1_000_000, oneTime: 100_000, due: 50_000 };
    const rounds = ctx.quick ? 2 : 10;
    const template = await seeded(ctx, s);
    try {
      let withR: ArmResult | null = null;
      let withoutR: ArmResult | null = null;
      await inTurn(
        ctx,
        [
          "without",
          "throughput without retention",
          async () => {
            withoutR = await arm(template, s, rounds, false, ctx);
            return withoutR.perS;
          },
        ],
        [
          "with",
          "throughput with retention deleting",
          async () => {
            withR = await arm(template, s, rounds, true, ctx);
            return withR.perS;
          },
        ],
      );
      const w = withR as unknown as ArmResult;
      const wo = withoutR as unknown as ArmResult;
      return {
        per_s_without: wo.perS,
        per_s_with: w.perS,
        ratio_with_vs_without: w.perS / wo.perS,
        claim_ms_p50_without: percentile(wo.claims, 50),
        claim_ms_p99_without: percentile(wo.claims, 99),
        claim_ms_p50_with: percentile(w.claims, 50),
        claim_ms_p99_with: percentile(w.claims, 99),
        claim_ms_max_with: Math.max(...w.claims),
        claims_with: w.claims.length,
        share_deleted_during_load: (w.deletedDuringLoad ?? 0) / s.expired,
        delete_s: w.deleteS ?? Number.NaN,
        deleted_per_s: s.expired / (w.deleteS ?? Number.NaN),
      };
    } finally {
      await template.drop();
    }
  },
};
