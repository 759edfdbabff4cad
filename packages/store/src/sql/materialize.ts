// The materializer (docs/architecture.md): due cron fires become trigger rows, unique per (job, instant), and
// next_fire_at is persisted in the same transaction — racing executors are harmless (SKIP LOCKED on the
// job rows, ON CONFLICT on the triggers) and a restart loses no occurrence.
import { sql } from "drizzle-orm";
import { query, withDates, type Db } from "../db.ts";
import { pauseUncomputable } from "./notification-fanout.ts";
import { NOTIFICATION_POOL } from "./notifications.ts";
import { jobInstantConflict } from "../schema.ts";
import { EXCLUSIVE_LOOKAHEAD_MS, newId, planFires, spreadOffsetMs, type CronJobState } from "@fairway/core";

interface DueJob extends CronJobState {
  id: string;
  spreadMs: number | null;
  tenantId: string;
  type: string;
  priority: number;
  maxAttempts: number;
  key: string | null;
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

export async function materialize(db: Db, now: Date, lookaheadMs: number, limit = 500): Promise<MaterializeResult> {
  return db.transaction(async (tx) => {
    // Exclusive overlap policies are planned only EXCLUSIVE_LOOKAHEAD_MS ahead (core planFires): such a
    // job is not selected before its fire is inside that shorter horizon, or every pass would lock it
    // and plan nothing.
    const jobs = withDates(
      await query<DueJob>(
        tx,
        sql`
      SELECT id, tenant_id AS "tenantId", type, cron, timezone, spread_ms AS "spreadMs", next_fire_at AS "nextFireAt", misfire,
             overlap, catchup_window_ms AS "catchupWindowMs", priority, max_attempts AS "maxAttempts", key
        FROM jobs
       WHERE status = 'active' AND cron IS NOT NULL
         AND next_fire_at <= ${new Date(now.getTime() + lookaheadMs).toISOString()}::timestamptz
         AND (overlap = 'allow'
              OR next_fire_at <= ${new Date(now.getTime() + Math.min(lookaheadMs, EXCLUSIVE_LOOKAHEAD_MS)).toISOString()}::timestamptz)
       ORDER BY next_fire_at
       LIMIT ${limit}
         FOR UPDATE SKIP LOCKED`,
      ),
      "nextFireAt",
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
      if (plan.supersede)
        superseded.push({ job_id: job.id, before: plan.supersede.before.toISOString(), reason: plan.supersede.reason });
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
    // The fires and the jobs' next_fire_at in ONE prepared statement: a pass is two round trips (select,
    // write) instead of three, and its plan is not rebuilt every pass. A data-modifying CTE always runs
    // to completion, whether or not the outer UPDATE reads it.
    await query(
      tx,
      sql`
      WITH stale AS (
        -- After a misfire, the fires written ahead before the outage (pending, never attempted, now
        -- overdue) are decided by this plan too: skipped with the misfire reason, so fire_once runs one
        -- catch-up and skip runs none, not also whatever the last pass had written ahead.
        UPDATE triggers t SET status = 'skipped', reason = s.reason, finished_at = now(), updated_at = now()
          FROM jsonb_to_recordset(${JSON.stringify(superseded)}::jsonb) AS s(job_id text, before timestamptz, reason text)
         WHERE t.job_id = s.job_id AND t.status = 'pending' AND t.kind = 'scheduled' AND t.attempt_count = 0
           AND t.scheduled_for <= s.before
        RETURNING 1
      ),
      input AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(
          id text, tenant_id text, job_id text, type text, scheduled_for timestamptz, status text,
          reason text, priority int, max_attempts int, exclusive boolean, overlap text, key text)
      ),
      decided AS (
        -- Overlap at fire time: skip while one is running or waiting; buffer_one lets one wait.
        SELECT i.*, CASE
            WHEN i.status = 'pending' AND i.overlap = 'skip' AND EXISTS (
              SELECT 1 FROM triggers o WHERE o.job_id = i.job_id AND o.status IN ('running', 'pending'))
              THEN 'overlap'
            WHEN i.status = 'pending' AND i.overlap = 'buffer_one' AND EXISTS (
              SELECT 1 FROM triggers o WHERE o.job_id = i.job_id AND o.status = 'pending')
              THEN 'overlap'
            ELSE i.reason END AS final_reason
          FROM input i
      ),
      fired AS (
        INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, status, reason,
                              priority, exclusive, max_attempts, next_attempt_at, finished_at, key)
        SELECT id, tenant_id, job_id, type, 'scheduled', scheduled_for,
               CASE WHEN final_reason IS NULL THEN 'pending' ELSE 'skipped' END, final_reason,
               priority, exclusive, max_attempts, scheduled_for,
               CASE WHEN final_reason IS NULL THEN NULL ELSE now() END, key
          FROM decided
        -- One row per (job, instant), ever: a racing executor's duplicate changes nothing. The one
        -- exception is a fire cancelled before it was ever attempted, by a PATCH (reason rescheduled)
        -- or a pause (reason paused), whose instant is planned again (the new schedule contains it, or
        -- the job was resumed): it is revived, same id, or that instant would be lost.
        ON CONFLICT ${jobInstantConflict} DO UPDATE
           SET status = excluded.status, reason = excluded.reason, priority = excluded.priority,
               exclusive = excluded.exclusive, max_attempts = excluded.max_attempts,
               next_attempt_at = excluded.next_attempt_at, finished_at = excluded.finished_at, key = excluded.key,
               updated_at = now()
         WHERE triggers.status = 'cancelled' AND triggers.reason IN ('rescheduled', 'paused')
           AND triggers.attempt_count = 0
        RETURNING 1
      )
      UPDATE jobs j SET next_fire_at = x.next_fire_at, updated_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(next)}::jsonb) AS x(id text, next_fire_at timestamptz)
       WHERE j.id = x.id`,
    );
    return result;
  });
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
