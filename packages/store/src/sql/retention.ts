// History retention: finished triggers (succeeded, skipped, cancelled) older than their tenant's
// historyRetentionDays, dead ones older than deadRetentionDays, their attempt rows (attempt_log and
// success_detail), and finished one-time jobs with no trigger left. In small batches, each its own
// short statement: rows are locked SKIP LOCKED, so a claim, settle or replay never waits on a
// retention pass, and a pass never waits on them. Found through triggers_job_idx (job_id, scheduled_for): a finished trigger was scheduled
// before it finished. An index on finished_at would read a column the settle writes, and every settle
// would stop being a HOT update (schema.ts, triggerQueue); see docs/decisions/0040-retention.md.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";

const FINISHED = sql`('succeeded', 'skipped', 'cancelled', 'unknown')`;

/** Deletes up to `batch` expired triggers with their attempts, as of `now` (an injected clock in tests).
 *  Returns how many triggers went, and how many were found (rows locked elsewhere are found, not
 *  deleted: a batch with `found` < `batch` was the last). */
export async function deleteExpiredTriggers(
  db: Db,
  now: Date,
  batch = 1000,
): Promise<{ deleted: number; found: number }> {
  const at = now.toISOString();
  const rows = await query<{ deleted: number; found: number }>(
    db,
    sql`
    WITH cand AS MATERIALIZED (
      SELECT x.id
        FROM tenants tn
        JOIN jobs j ON j.tenant_id = tn.id
        CROSS JOIN LATERAL (
          SELECT x.id, x.status, coalesce(x.finished_at, x.updated_at) AS done_at FROM triggers x
           WHERE x.job_id = j.id
             AND x.scheduled_for < ${at}::timestamptz - make_interval(days => least(tn.history_retention_days, tn.dead_retention_days))
        ) x
       WHERE (x.status IN ${FINISHED} AND x.done_at < ${at}::timestamptz - make_interval(days => tn.history_retention_days))
          OR (x.status = 'dead' AND x.done_at < ${at}::timestamptz - make_interval(days => tn.dead_retention_days))
       LIMIT ${batch}
    ),
    locked AS (
      SELECT t.id FROM triggers t WHERE t.id = ANY (ARRAY(SELECT id FROM cand)) FOR UPDATE SKIP LOCKED
    ),
    del AS (
      -- Re-checked on the locked row: a replay may have made a dead one pending meanwhile.
      DELETE FROM triggers t WHERE t.id = ANY (ARRAY(SELECT id FROM locked))
         AND (t.status IN ${FINISHED} OR t.status = 'dead')
      RETURNING t.id
    ),
    att AS (DELETE FROM attempt_log a WHERE a.trigger_id = ANY (ARRAY(SELECT id FROM del))),
    -- A notification's row goes with its trigger (store notifications.ts).
    ntf AS (DELETE FROM notifications n WHERE n.id = ANY (ARRAY(SELECT id FROM del))),
    det AS (DELETE FROM success_detail s WHERE s.trigger_id = ANY (ARRAY(SELECT id FROM del)))
    SELECT (SELECT count(*)::int FROM del) AS deleted, (SELECT count(*)::int FROM cand) AS found`,
  );
  return { deleted: rows[0]?.deleted ?? 0, found: rows[0]?.found ?? 0 };
}

/** Deletes up to `batch` finished one-time jobs (completed or cancelled, no trigger left) whose last
 *  change is older than their tenant's historyRetentionDays. */
export async function deleteExpiredJobs(db: Db, now: Date, batch = 1000): Promise<{ deleted: number; found: number }> {
  const at = now.toISOString();
  const rows = await query<{ id: string }>(
    db,
    sql`
    DELETE FROM jobs j
     WHERE j.id = ANY (ARRAY(
       SELECT x.id FROM jobs x JOIN tenants tn ON tn.id = x.tenant_id
        WHERE x.cron IS NULL AND x.status IN ('completed', 'cancelled')
          AND x.updated_at < ${at}::timestamptz - make_interval(days => tn.history_retention_days)
          AND NOT EXISTS (SELECT 1 FROM triggers t WHERE t.job_id = x.id)
        LIMIT ${batch}
          FOR UPDATE OF x SKIP LOCKED))
    RETURNING j.id`,
  );
  return { deleted: rows.length, found: rows.length };
}
