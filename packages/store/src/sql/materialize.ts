// The materializer (docs/architecture.md): due cron fires become trigger rows, unique per (job, instant), and
// next_fire_at is persisted in the same transaction — racing executors are harmless (SKIP LOCKED on the
// job rows, ON CONFLICT on the triggers) and a restart loses no occurrence.
//
// On the distributed layout (docs/scaling.md) a transaction locking due jobs of many tenants would span
// nodes: the executor reads which tenants have due jobs (dueCronTenants, without a lock, across the
// shards: once per pass, never per claim), then materializes each tenant in a transaction of its own
// on its shard group (`tenantId`), whose statements all name the tenant.
import { sql } from "drizzle-orm";
import { query, withDates, type Db } from "../db.ts";
import { pauseUncomputable } from "./notification-fanout.ts";
import { NOTIFICATION_POOL } from "./notifications.ts";
import { jobInstantConflict, SCHEDULED_KEY } from "../schema.ts";
import {
  backlogSupersede,
  EXCLUSIVE_LOOKAHEAD_MS,
  MISFIRE_GRACE_MS,
  newId,
  planFires,
  spreadOffsetMs,
  type CronJobState,
} from "@fairway/core";

interface DueJob extends CronJobState {
  id: string;
  spreadMs: number | null;
  tenantId: string;
  type: string;
  priority: number;
  maxAttempts: number;
  key: string | null;
  /** The job's latest fire before its staleness threshold, when still pending and never attempted. */
  stalePendingAt: Date | null;
}

export interface MaterializeResult {
  jobs: number;
  fired: number;
  skipped: number;
  /** Tenants and pools that received due work (for the ready-tenant index). */
  ready: Array<{ tenantId: string; type: string; dueAtMs: number }>;
  /** Jobs whose schedule could not be computed; they were paused. */
  failed: Array<{ jobId: string; tenantId: string; error: string }>;
}

/** The cron jobs due by `now + lookaheadMs`. Exclusive overlap policies are planned only
 *  EXCLUSIVE_LOOKAHEAD_MS ahead (core planFires): such a job is not selected before its fire is inside
 *  that shorter horizon, or every pass would lock it and plan nothing. */
const dueCron = (now: Date, lookaheadMs: number) => sql`
       status = 'active' AND cron IS NOT NULL
         AND next_fire_at <= ${new Date(now.getTime() + lookaheadMs).toISOString()}::timestamptz
         AND (overlap = 'allow'
              OR next_fire_at <= ${new Date(now.getTime() + Math.min(lookaheadMs, EXCLUSIVE_LOOKAHEAD_MS)).toISOString()}::timestamptz)`;

/** The tenants with cron jobs due, and how many of the first `limit` due jobs are each one's: a read
 *  without a lock across every shard (the distributed layout's materializer, once per pass). */
export async function dueCronTenants(
  db: Db,
  now: Date,
  lookaheadMs: number,
  limit = 500,
): Promise<Array<{ tenantId: string; jobs: number }>> {
  return query<{ tenantId: string; jobs: number }>(
    db,
    sql`
    SELECT d.tenant_id AS "tenantId", count(*)::int AS jobs FROM (
      SELECT tenant_id FROM jobs WHERE ${dueCron(now, lookaheadMs)} ORDER BY next_fire_at LIMIT ${limit}
    ) d GROUP BY d.tenant_id ORDER BY 2 DESC, 1`,
  );
}

/** Writes the due fires of up to `limit` cron jobs. `tenantId`: of that tenant's jobs only, each
 *  statement on its shard group (the distributed layout); without it, of any tenants'. */
export async function materialize(
  db: Db,
  now: Date,
  lookaheadMs: number,
  limit = 500,
  tenantId?: string,
): Promise<MaterializeResult> {
  return db.transaction(async (tx) => {
    const jobs = withDates(
      await query<DueJob>(tx, dueJobsStatement(now, lookaheadMs, limit, tenantId)),
      "nextFireAt",
      "stalePendingAt",
    );
    const result: MaterializeResult = { jobs: jobs.length, fired: 0, skipped: 0, ready: [], failed: [] };
    if (jobs.length === 0) return result;

    const rows: object[] = [];
    const next: object[] = [];
    const broken: string[] = [];
    const superseded: object[] = [];
    for (const job of jobs) {
      let plan;
      try {
        plan = planFires({ ...job, offsetMs: spreadOffsetMs(job.id, job.spreadMs) }, now, lookaheadMs);
      } catch (err) {
        // A job whose schedule cannot be computed (e.g. its zone left the tz database in an upgrade)
        // must not stall every other tenant's cron: it is paused, visibly, and reported.
        broken.push(job.id);
        result.failed.push({
          jobId: job.id,
          tenantId: job.tenantId,
          error: err instanceof Error ? err.message : String(err),
        });
        continue;
      }
      const exclusive = job.overlap !== "allow";
      for (const at of plan.fire) {
        rows.push(triggerRow(job, at, "pending", null, exclusive));
        result.ready.push({ tenantId: job.tenantId, type: job.type, dueAtMs: at.getTime() });
      }
      for (const s of plan.skipped) rows.push(triggerRow(job, s.at, "skipped", s.reason, exclusive));
      result.fired += plan.fire.length;
      result.skipped += plan.skipped.length;
      next.push({ id: job.id, next_fire_at: plan.nextFireAt?.toISOString() ?? null });
      // An outage's supersede covers every older fire; otherwise a backlog past the grace (fires the
      // tenant's quota or caps do not let run) is decided by the same policy.
      const backlog = plan.supersede ? null : backlogSupersede(job, now, lookaheadMs, job.stalePendingAt);
      if (plan.supersede)
        superseded.push({
          job_id: job.id,
          after: null,
          before: plan.supersede.before.toISOString(),
          reason: plan.supersede.reason,
          keep_latest: false,
        });
      else if (backlog)
        superseded.push({
          job_id: job.id,
          after: backlog.after.toISOString(),
          before: backlog.before.toISOString(),
          reason: backlog.reason,
          keep_latest: backlog.keepLatest,
        });
    }

    if (broken.length > 0) {
      // Paused with its reason, and a job.paused notification in this transaction (notification-fanout.ts).
      const notified = await pauseUncomputable(
        tx,
        broken,
        result.failed.map((f) => f.error),
      );
      for (const n of notified) result.ready.push({ tenantId: n.tenantId, type: NOTIFICATION_POOL, dueAtMs: 0 });
    }
    const keys = keysOf(jobs);
    if (tenantId === undefined) await query(tx, writeStatement(rows, next, superseded, keys));
    else for (const statement of shardWrites(tenantId, rows, next, superseded, keys)) await query(tx, statement);
    return result;
  });
}

/** The due cron jobs a pass plans, locked (SKIP LOCKED: a racing executor takes the others). With each
 *  job whose fires may pile up (overlap allow), its latest scheduled fire before the staleness threshold
 *  (core staleBefore: the grace, or fire_all's window) when that fire still waits, never attempted: one
 *  backward step on the (job, instant) index, whatever the job's history. */
export function dueJobsStatement(now: Date, lookaheadMs: number, limit: number, tenantId?: string) {
  return sql`
      SELECT id, tenant_id AS "tenantId", type, cron, timezone, spread_ms AS "spreadMs", next_fire_at AS "nextFireAt", misfire,
             overlap, catchup_window_ms AS "catchupWindowMs", priority, max_attempts AS "maxAttempts", key,
             CASE WHEN overlap = 'allow' THEN (
               SELECT CASE WHEN o.status = 'pending' AND o.attempt_count = 0 THEN o.scheduled_for END
                 FROM triggers o
                WHERE o.job_id = jobs.id AND o.kind = 'scheduled' ${at("o", tenantId)}
                  AND o.scheduled_for < ${now.toISOString()}::timestamptz
                      - greatest(${MISFIRE_GRACE_MS}, CASE WHEN jobs.misfire = 'fire_all' THEN jobs.catchup_window_ms ELSE 0 END)
                        * interval '1 millisecond'
                ORDER BY o.scheduled_for DESC
                LIMIT 1) END AS "stalePendingAt"
        FROM jobs
       WHERE ${dueCron(now, lookaheadMs)} ${tenantId === undefined ? sql`` : sql`AND tenant_id = ${tenantId}`}
       ORDER BY next_fire_at
       LIMIT ${limit}
         FOR UPDATE SKIP LOCKED`;
}

function triggerRow(job: DueJob, at: Date, status: string, reason: string | null, exclusive: boolean) {
  return {
    id: newId("trg"),
    tenant_id: job.tenantId,
    job_id: job.id,
    type: job.type,
    scheduled_for: at.toISOString(),
    status,
    reason,
    priority: job.priority,
    max_attempts: job.maxAttempts,
    exclusive,
    overlap: job.overlap,
    key: job.key,
  };
}

/** The fires and the jobs' next_fire_at in ONE prepared statement: a pass is two round trips (select,
 *  write) instead of three, and its plan is not rebuilt every pass. A data-modifying CTE always runs to
 *  completion, whether or not the outer UPDATE reads it. */
function writeStatement(rows: object[], next: object[], superseded: object[], keys: KeyRef[]) {
  return sql`
      WITH klock AS MATERIALIZED (${lockKeys(keys)}),
      stale AS (${staleUpdate(superseded)} RETURNING 1),
      input AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(${FIRE_COLUMNS})
         WHERE (SELECT count(*) FROM klock) >= 0
      ),
      decided AS (${decidedFires(sql`input i`)}),
      fired AS (
        INSERT INTO triggers (${TRIGGER_COLUMNS})
        SELECT d.id, d.tenant_id, ${fireValues("d")}, CASE WHEN d.final_reason IS NULL THEN NULL ELSE now() END, d.key
          FROM decided d
        ON CONFLICT ${jobInstantConflict} ${REVIVE}
        RETURNING 1
      )
      ${nextFireUpdate(next)}`;
}

/** The same writes for one tenant, as three statements of one transaction, each on the tenant's shard
 *  group: Citus routes no INSERT inside a CTE, and an INSERT … SELECT goes to the shard (pushed down) when
 *  its tenant_id is read from a colocated table (`tenants t` at the tenant). now() is read once in FROM:
 *  Citus refuses it in a CASE, and in an ON CONFLICT's SET (which takes the row's new updated_at). On the
 *  layout the (job, instant) index also holds the tenant. */
export function shardWrites(
  tenantId: string,
  rows: object[],
  next: object[],
  superseded: object[],
  keys: KeyRef[] = [],
) {
  return [
    sql`WITH klock AS MATERIALIZED (${lockKeys(keys, tenantId)}) ${staleUpdate(superseded, tenantId)}`,
    sql`
      INSERT INTO triggers (${TRIGGER_COLUMNS})
      SELECT d.id, t.id, ${fireValues("d")}, CASE WHEN d.final_reason IS NULL THEN NULL ELSE d.now END, d.key
        FROM tenants t
        CROSS JOIN (${decidedFires(
          sql`(SELECT y.*, now() AS now FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS y(${FIRE_COLUMNS})) i`,
          tenantId,
        )}) d
       WHERE t.id = ${tenantId}
      ON CONFLICT (job_id, scheduled_for, ${sql.raw(SCHEDULED_KEY)}, tenant_id) ${REVIVE}`,
    nextFireUpdate(next, tenantId),
  ];
}

const FIRE_COLUMNS = sql`id text, tenant_id text, job_id text, type text, scheduled_for timestamptz, status text,
          reason text, priority int, max_attempts int, exclusive boolean, overlap text, key text`;
const TRIGGER_COLUMNS = sql`id, tenant_id, job_id, type, kind, scheduled_for, status, reason,
                              priority, exclusive, max_attempts, next_attempt_at, finished_at, key`;
const fireValues = (d: string) =>
  sql.raw(`${d}.job_id, ${d}.type, 'scheduled', ${d}.scheduled_for,
               CASE WHEN ${d}.final_reason IS NULL THEN 'pending' ELSE 'skipped' END, ${d}.final_reason,
               ${d}.priority, ${d}.exclusive, ${d}.max_attempts, ${d}.scheduled_for`);

/** One row per (job, instant), ever: a racing executor's duplicate changes nothing. The one exception is
 *  a fire cancelled before it was ever attempted, by a PATCH (reason rescheduled) or a pause (reason
 *  paused), whose instant is planned again (the new schedule contains it, or the job was resumed): it is
 *  revived, same id, or that instant would be lost. */
const REVIVE = sql`DO UPDATE
           SET status = excluded.status, reason = excluded.reason, priority = excluded.priority,
               exclusive = excluded.exclusive, max_attempts = excluded.max_attempts,
               next_attempt_at = excluded.next_attempt_at, finished_at = excluded.finished_at, key = excluded.key,
               updated_at = excluded.updated_at
         WHERE triggers.status = 'cancelled' AND triggers.reason IN ('rescheduled', 'paused')
           AND triggers.attempt_count = 0`;

const at = (alias: string, tenantId?: string) =>
  tenantId === undefined ? sql`` : sql`AND ${sql.raw(alias)}.tenant_id = ${tenantId}`;

type KeyRef = { tenant_id: string; key: string };

/** The fairness keys the pass's fires and skips count in or out (tenant_keys, by the queue's triggers). */
function keysOf(jobs: DueJob[]): KeyRef[] {
  const seen = new Map<string, KeyRef>();
  for (const j of jobs)
    if (j.key !== null) seen.set(`${j.tenantId}\u0000${j.key}`, { tenant_id: j.tenantId, key: j.key });
  return [...seen.values()];
}

/** Lock order (docs/guarantees.md): the write's key rows, locked in key order before any trigger row is
 *  written. The queue's triggers then update them at the statement's end — the skipped fires' keys one
 *  by one as their rows were updated, the new fires' in key order — without waiting: a claim or settle
 *  that holds one of them waits here instead, before this pass holds any other. Only existing rows: a
 *  key's first row is inserted by its first fire. A statement reads "klock" before it writes. */
const lockKeys = (keys: KeyRef[], tenantId?: string) => sql`
        SELECT 1 FROM tenant_keys k
          JOIN jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) AS x(tenant_id text, key text)
            ON k.tenant_id = x.tenant_id AND k.key = x.key
         WHERE true ${at("k", tenantId)}
         ORDER BY k.tenant_id, k.key
           FOR UPDATE OF k`;

/** After a misfire, the fires written ahead before the outage (pending, never attempted, now overdue) are
 *  decided by this plan too: skipped with the misfire reason, so fire_once runs one catch-up and skip
 *  runs none, not also whatever the last pass had written ahead. A backlog past the grace is decided
 *  the same way, over the fires from `after` on (a bounded range of the job's index), fire_once keeping
 *  the latest of them pending (`keep_latest`). A fire another transaction holds (a
 *  claim taking it this moment) is left to it (SKIP LOCKED): this pass holds its key rows, and waiting
 *  for a trigger row while holding them is what a deadlock is made of. */
const staleUpdate = (superseded: object[], tenantId?: string) => sql`
        UPDATE triggers t SET status = 'skipped', reason = x.reason, finished_at = now(), updated_at = now()
          FROM (SELECT t0.id, s.reason FROM triggers t0
                  JOIN jsonb_to_recordset(${JSON.stringify(superseded)}::jsonb)
                         AS s(job_id text, after timestamptz, before timestamptz, reason text, keep_latest boolean)
                    ON t0.job_id = s.job_id
                 WHERE t0.status = 'pending' AND t0.kind = 'scheduled' AND t0.attempt_count = 0
                   AND t0.scheduled_for <= s.before AND (s.after IS NULL OR t0.scheduled_for >= s.after)
                   AND (s.keep_latest IS NOT TRUE OR t0.scheduled_for < (
                         SELECT max(t1.scheduled_for) FROM triggers t1
                          WHERE t1.job_id = s.job_id AND t1.status = 'pending' AND t1.kind = 'scheduled'
                            AND t1.scheduled_for >= s.after AND t1.scheduled_for <= s.before ${at("t1", tenantId)}))
                   AND (SELECT count(*) FROM klock) >= 0 ${at("t0", tenantId)}
                 ORDER BY t0.id
                   FOR UPDATE OF t0 SKIP LOCKED) x
         WHERE t.id = x.id ${at("t", tenantId)}`;

/** Overlap at fire time: skip while one is running or waiting; buffer_one lets one wait. */
const decidedFires = (input: ReturnType<typeof sql>, tenantId?: string) => sql`
        SELECT i.*, CASE
            WHEN i.status = 'pending' AND i.overlap = 'skip' AND EXISTS (
              SELECT 1 FROM triggers o WHERE o.job_id = i.job_id AND o.status IN ('running', 'pending') ${at("o", tenantId)})
              THEN 'overlap'
            WHEN i.status = 'pending' AND i.overlap = 'buffer_one' AND EXISTS (
              SELECT 1 FROM triggers o WHERE o.job_id = i.job_id AND o.status = 'pending' ${at("o", tenantId)})
              THEN 'overlap'
            ELSE i.reason END AS final_reason
          FROM ${input}`;

const nextFireUpdate = (next: object[], tenantId?: string) => sql`
      UPDATE jobs j SET next_fire_at = x.next_fire_at, updated_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(next)}::jsonb) AS x(id text, next_fire_at timestamptz)
       WHERE j.id = x.id ${at("j", tenantId)}`;
