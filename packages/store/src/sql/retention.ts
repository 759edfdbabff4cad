// History retention: finished triggers (succeeded, skipped, cancelled) older than their tenant's
// historyRetentionDays, dead ones older than deadRetentionDays, their attempt rows (attempt_log and
// success_detail), finished one-time jobs with no trigger left, and notification fold windows that say
// nothing any more. In small batches, each its own short statement: rows are locked SKIP LOCKED, so a
// claim, settle or replay never waits on a retention pass, and a pass never waits on them. Triggers are
// found through triggers_job_idx (job_id, scheduled_for): a finished trigger was scheduled before it
// finished. An index on finished_at would read a column the settle writes, and every settle would stop
// being a HOT update (schema.ts, triggerQueue); see docs/decisions/0040-retention.md.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { scopeTo } from "../layout/scope.ts";

const FINISHED = sql`('succeeded', 'skipped', 'cancelled', 'unknown')`;

/** On the per-tenant layout the executor runs each batch for one tenant, with every table read at it
 *  (scopeTo), so that the statement (its SKIP LOCKED locks included) runs on the tenant's shard group
 *  alone. */
const tenantIs = (alias: string, tenantId: string | undefined, column = "tenant_id") =>
  scopeTo(tenantId)(alias, column);

/** Where a pass has got to: triggers are walked in (job id, scheduled time) order, jobs in id order. */
export interface RetentionCursor {
  jobId: string;
  /** The scheduled time of the last trigger looked at, as Postgres prints it (exact to the
   *  microsecond, unlike a Date). The next batch starts at it, not after it: manual runs of a job may
   *  share a scheduled time, and a batch may have ended among them. */
  at?: string;
}

export interface RetentionBatch {
  deleted: number;
  /** Rows looked at (locked or re-checked rows are found, not deleted): fewer than `batch` ends the pass. */
  found: number;
  /** Where the next batch starts; null when nothing was found. */
  next: RetentionCursor | null;
}

/** Deletes up to `batch` expired triggers with their attempts, as of `now` (an injected clock in tests),
 *  from `after` on in (job id, scheduled time) order. Each batch starts where the last one ended, so
 *  a pass reads each job's expired range about once: a batch that started from the first job again
 *  would walk every job emptied so far and the index entries of every trigger deleted so far, and a
 *  pass would cost the square of what it deletes. Per job the scan is a range of triggers_job_idx
 *  that stops after `batch` rows (the LIMIT also keeps the planner from flattening it into a merge
 *  join over the whole index). */
export async function deleteExpiredTriggers(
  db: Db,
  now: Date,
  batch = 1000,
  after: RetentionCursor | null = null,
  tenantId?: string,
): Promise<RetentionBatch> {
  const rows = await query<{ deleted: number; found: number; job: string | null; at: string | null }>(
    db,
    expiredTriggersStatement(now, batch, after, tenantId),
  );
  const r = rows[0];
  return {
    deleted: r?.deleted ?? 0,
    found: r?.found ?? 0,
    next: r?.job ? { jobId: r.job, at: r.at ?? undefined } : null,
  };
}

export function expiredTriggersStatement(now: Date, batch: number, after: RetentionCursor | null, tenantId?: string) {
  const at = now.toISOString();
  const fromJob = after?.jobId ?? "";
  const fromAt = after?.at ?? "-infinity";
  return sql`
    WITH cand AS MATERIALIZED (
      SELECT x.id, j.id AS job_id, x.scheduled_for
        FROM jobs j
        JOIN tenants tn ON tn.id = j.tenant_id ${tenantIs("tn", tenantId, "id")}
        CROSS JOIN LATERAL (
          SELECT x.id, x.scheduled_for FROM triggers x
           WHERE x.job_id = j.id ${tenantIs("x", tenantId)}
             AND x.scheduled_for < ${at}::timestamptz - make_interval(days => least(tn.history_retention_days, tn.dead_retention_days))
             AND x.scheduled_for >= CASE WHEN j.id = ${fromJob} THEN ${fromAt}::timestamptz ELSE '-infinity' END
             AND ((x.status IN ${FINISHED} AND coalesce(x.finished_at, x.updated_at) < ${at}::timestamptz - make_interval(days => tn.history_retention_days))
              OR (x.status = 'dead' AND coalesce(x.finished_at, x.updated_at) < ${at}::timestamptz - make_interval(days => tn.dead_retention_days)))
           ORDER BY x.scheduled_for
           LIMIT ${batch}
        ) x
       WHERE j.id >= ${fromJob} ${tenantIs("j", tenantId)}
       ORDER BY j.id, x.scheduled_for
       LIMIT ${batch}
    ),
    last AS (SELECT job_id, scheduled_for FROM cand ORDER BY job_id DESC, scheduled_for DESC LIMIT 1),
    locked AS (
      SELECT t.id FROM triggers t WHERE t.id = ANY (ARRAY(SELECT id FROM cand)) ${tenantIs("t", tenantId)} FOR UPDATE SKIP LOCKED
    ),
    del AS (
      -- Re-checked on the locked row: a replay may have made a dead one pending meanwhile.
      DELETE FROM triggers t WHERE t.id = ANY (ARRAY(SELECT id FROM locked)) ${tenantIs("t", tenantId)}
         AND (t.status IN ${FINISHED} OR t.status = 'dead')
      RETURNING t.id
    ),
    att AS (DELETE FROM attempt_log a WHERE a.trigger_id = ANY (ARRAY(SELECT id FROM del)) ${tenantIs("a", tenantId)}),
    -- A notification's row goes with its trigger (store notifications.ts).
    ntf AS (DELETE FROM notifications n WHERE n.id = ANY (ARRAY(SELECT id FROM del)) ${tenantIs("n", tenantId)}),
    det AS (DELETE FROM success_detail s WHERE s.trigger_id = ANY (ARRAY(SELECT id FROM del)) ${tenantIs("s", tenantId)})
    SELECT (SELECT count(*)::int FROM del) AS deleted, (SELECT count(*)::int FROM cand) AS found,
           (SELECT job_id FROM last) AS job, (SELECT scheduled_for::text FROM last) AS at`;
}

/** Deletes up to `batch` finished one-time jobs (completed, failed or cancelled, no trigger left) whose last
 *  change is older than their tenant's historyRetentionDays, among those after `after` in id order
 *  (the next batch starts where this one ended, as for triggers). */
export async function deleteExpiredJobs(
  db: Db,
  now: Date,
  batch = 1000,
  after: RetentionCursor | null = null,
  tenantId?: string,
): Promise<RetentionBatch> {
  const at = now.toISOString();
  const rows = await query<{ deleted: number; found: number; last: string | null }>(
    db,
    sql`
    WITH cand AS MATERIALIZED (
      SELECT x.id FROM jobs x JOIN tenants tn ON tn.id = x.tenant_id ${tenantIs("tn", tenantId, "id")}
       WHERE x.id > ${after?.jobId ?? ""} ${tenantIs("x", tenantId)}
         AND x.cron IS NULL AND x.status IN ('completed', 'failed', 'cancelled')
         AND x.updated_at < ${at}::timestamptz - make_interval(days => tn.history_retention_days)
       ORDER BY x.id
       LIMIT ${batch}
    ),
    del AS (
      DELETE FROM jobs j
       WHERE j.id = ANY (ARRAY(
         SELECT x.id FROM jobs x WHERE x.id = ANY (ARRAY(SELECT id FROM cand)) ${tenantIs("x", tenantId)}
            AND NOT EXISTS (SELECT 1 FROM triggers t WHERE t.job_id = x.id ${tenantIs("t", tenantId)})
            FOR UPDATE SKIP LOCKED)) ${tenantIs("j", tenantId)}
      RETURNING j.id
    )
    SELECT (SELECT count(*)::int FROM del) AS deleted, (SELECT count(*)::int FROM cand) AS found,
           (SELECT max(id) FROM cand) AS last`,
  );
  const r = rows[0];
  return { deleted: r?.deleted ?? 0, found: r?.found ?? 0, next: r?.last ? { jobId: r.last } : null };
}

/** A fold row's key (channel, subject, event): where a pass over notification_folds has got to. */
export type FoldCursor = readonly [channelId: string, subject: string, event: string];

/** Deletes up to `batch` fold windows (notification-fanout.ts, fanOut) that say nothing any more, after
 *  `after` in key order: past their channel's window with nothing folded since the last notification
 *  sent (the next event then starts a window and reports 0 folded, with the row or without it), of a
 *  job that is gone (no event will come to report what they folded), or of a channel that is gone
 *  (a tenant deleted with its channels). Rows another transaction holds are skipped; one updated
 *  meanwhile is checked again under its lock. `tenantId`: that tenant's only, on its shard group alone on
 *  a Citus cluster. */
export async function deleteStaleFolds(
  db: Db,
  now: Date,
  batch = 1000,
  after: FoldCursor | null = null,
  tenantId?: string,
): Promise<{ deleted: number; found: number; next: FoldCursor | null }> {
  const [c0, s0, e0] = after ?? ["", "", ""];
  const at = tenantId === undefined ? sql`` : sql`AND f.tenant_id = ${tenantId}`;
  // The tenant by value where there is one: Citus routes a statement by the constants it is given, not
  // through a join's equalities.
  const tenant = tenantId === undefined ? sql`f.tenant_id` : sql`${tenantId}`;
  const rows = await query<{ deleted: number; found: number; last: FoldCursor | null }>(
    db,
    sql`
    WITH cand AS MATERIALIZED (
      SELECT f.channel_id, f.subject, f.event FROM notification_folds f
        LEFT JOIN notification_channels c ON c.tenant_id = ${tenant} AND c.id = f.channel_id
       WHERE (f.channel_id, f.subject, f.event) > (${c0}, ${s0}, ${e0}) ${at}
         AND (c.id IS NULL
              OR (f.sent_at <= ${now.toISOString()}::timestamptz - make_interval(secs => c.window_seconds)
                  AND (f.folded = 0
                       OR (f.subject <> ''
                           AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = ${tenant} AND j.id = f.subject)))))
       ORDER BY f.channel_id, f.subject, f.event
       LIMIT ${batch}
         FOR UPDATE OF f SKIP LOCKED
    ),
    del AS (
      DELETE FROM notification_folds f USING cand
       WHERE f.channel_id = cand.channel_id AND f.subject = cand.subject AND f.event = cand.event ${at}
      RETURNING 1
    ),
    last AS (SELECT channel_id, subject, event FROM cand ORDER BY channel_id DESC, subject DESC, event DESC LIMIT 1)
    SELECT (SELECT count(*)::int FROM del) AS deleted, (SELECT count(*)::int FROM cand) AS found,
           (SELECT json_build_array(channel_id, subject, event) FROM last) AS last`,
  );
  const r = rows[0];
  return { deleted: r?.deleted ?? 0, found: r?.found ?? 0, next: r?.last ?? null };
}

/** Deletes up to `batch` fairness-key rows (schema.ts, tenantKeys) of keys idle past their tenant's
 *  historyRetentionDays: nothing queued or running, no override, nothing queued since. Found by a scan
 *  that stops after `batch` (no index on active_at: see schema.ts); each row is re-checked under its
 *  lock (a trigger queued meanwhile makes it busy again), and one held elsewhere is skipped. A key queued again later starts a new row, at its
 *  tenant's least backlogged vtime, as it would have with the old one. */
export async function deleteIdleKeys(
  db: Db,
  now: Date,
  batch = 1000,
  tenantId?: string,
): Promise<{ deleted: number; found: number }> {
  const rows = await query<{ deleted: number; found: number }>(
    db,
    sql`
    WITH cand AS MATERIALIZED (
      SELECT k.tenant_id, k.key FROM tenant_keys k
        JOIN tenants tn ON tn.id = k.tenant_id ${tenantIs("tn", tenantId, "id")}
       WHERE true ${tenantIs("k", tenantId)} AND k.active_at < ${now.toISOString()}::timestamptz - make_interval(days => tn.history_retention_days)
         AND k.queued = 0 AND k.running = 0 AND k.override IS NULL
       LIMIT ${batch}
         FOR UPDATE OF k SKIP LOCKED
    ),
    del AS (
      DELETE FROM tenant_keys k USING cand c
       WHERE k.tenant_id = c.tenant_id AND k.key = c.key ${tenantIs("k", tenantId)}
         AND k.queued = 0 AND k.running = 0 AND k.override IS NULL
      RETURNING 1
    )
    SELECT (SELECT count(*)::int FROM del) AS deleted, (SELECT count(*)::int FROM cand) AS found`,
  );
  return rows[0] ?? { deleted: 0, found: 0 };
}
