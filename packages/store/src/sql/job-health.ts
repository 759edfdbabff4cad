// How a job is doing, for the lists people look at (docs/dead-letters.md): its last outcome and the
// dead letters grouped by job, with a bounded replay of all of one job's. The failure streak itself is
// the job row's (jobs.failure_streak, moved by the settle's notification statement); the last outcome
// is read at list time for a page of jobs, one probe of triggers_job_idx per job, so neither claim nor
// settle pays anything for it.
import { sql } from "drizzle-orm";
import { query, withDates, type Db } from "../db.ts";
import { andTenant } from "./cluster-reads.ts";
import { COUNT_CAP } from "./dashboard-reads.ts";

/** What the latest fire that was tried came to: succeeded; dead_lettered (retries spent); unknown
 *  (at-most-once, lost in flight); failed (its last attempt failed, a retry is pending); cancelled (it
 *  ran and was cut or cancelled: onBusy cancel_running, a pause, a delete). */
type LastOutcome = "succeeded" | "failed" | "dead_lettered" | "unknown" | "cancelled";

export interface LastRun {
  outcome: LastOutcome;
  at: Date;
}

/** The last outcome of each of `jobIds` (a page of a list, all of `tenantId`) that was ever tried. The
 *  newest fire by instant that has an attempt: triggers_job_idx walked backwards per job, past the
 *  fires written ahead (pending, never tried) and the running ones. Named with its tenant, the read
 *  goes to the tenant's shard alone on a Citus cluster. */
export async function lastRuns(db: Db, tenantId: string, jobIds: string[]): Promise<Map<string, LastRun>> {
  if (jobIds.length === 0) return new Map();
  const rows = await query<{ jobId: string; status: string; at: Date }>(
    db,
    sql`
    SELECT x.id AS "jobId", l.status, l.at
      FROM jsonb_array_elements_text(${JSON.stringify(jobIds)}::jsonb) AS x(id)
      CROSS JOIN LATERAL (
        SELECT t.status, coalesce(t.finished_at, t.updated_at) AS at FROM triggers t
         WHERE t.tenant_id = ${tenantId} AND t.job_id = x.id AND t.attempt_count > 0
           AND t.status IN ('succeeded', 'dead', 'unknown', 'pending', 'cancelled')
         ORDER BY t.scheduled_for DESC
         LIMIT 1) l`,
  );
  const out = new Map<string, LastRun>();
  for (const r of withDates(rows, "at")) out.set(r.jobId, { outcome: OUTCOME[r.status]!, at: r.at });
  return out;
}

const OUTCOME: Record<string, LastOutcome> = {
  succeeded: "succeeded",
  dead: "dead_lettered",
  unknown: "unknown",
  pending: "failed",
  cancelled: "cancelled",
};

export interface DeadLetterGroup {
  tenantId: string;
  jobId: string;
  jobName: string;
  type: string;
  /** Dead letters of the job among the newest COUNT_CAP (capped says when there were more). */
  count: number;
  /** Its newest dead letter: the trigger, when it ended, why, and its last attempt's error. */
  latestId: string;
  latestAt: Date | null;
  reason: string | null;
  error: string | null;
  httpStatus: number | null;
}

/** Dead letters grouped by job, the job with the newest first. Of the newest COUNT_CAP dead letters
 *  (trigger ids are time-ordered), so a deep backlog costs no more than that; `capped` says so. */
export async function deadLetterGroups(
  db: Db,
  opts: { tenantId?: string; limit: number },
): Promise<{ groups: DeadLetterGroup[]; capped: boolean }> {
  // Joined on the tenant too (a colocated join on a Citus cluster); one tenant's read names it on every
  // table, so it goes to its shard alone.
  const only = (alias: string) => andTenant(alias, opts.tenantId || undefined);
  const rows = await query<DeadLetterGroup & { scanned: number }>(
    db,
    sql`
    WITH recent AS (
      SELECT d.tenant_id, d.trigger_id FROM dead_letters d WHERE true ${only("d")}
       ORDER BY d.trigger_id DESC LIMIT ${COUNT_CAP}
    ),
    g AS (
      SELECT t.tenant_id, t.job_id, count(*)::int AS n, max(t.id) AS latest
        FROM recent r JOIN triggers t ON t.tenant_id = r.tenant_id AND t.id = r.trigger_id
       WHERE t.status = 'dead' ${only("t")}
       GROUP BY t.tenant_id, t.job_id
       ORDER BY latest DESC
       LIMIT ${opts.limit}
    )
    SELECT j.tenant_id AS "tenantId", g.job_id AS "jobId", j.name AS "jobName", j.type, g.n AS count,
           g.latest AS "latestId", t.finished_at AS "latestAt", t.reason, a.error, a.http_status AS "httpStatus",
           (SELECT count(*)::int FROM recent) AS scanned
      FROM g JOIN jobs j ON j.tenant_id = g.tenant_id AND j.id = g.job_id ${only("j")}
      JOIN triggers t ON t.tenant_id = g.tenant_id AND t.id = g.latest ${only("t")}
      LEFT JOIN LATERAL (
        SELECT l.error, l.http_status FROM attempt_log l
         WHERE l.tenant_id = t.tenant_id AND l.trigger_id = t.id ${only("l")}
         ORDER BY l.attempt DESC LIMIT 1
      ) a ON true
     ORDER BY g.latest DESC`,
  );
  const capped = (rows[0]?.scanned ?? 0) >= COUNT_CAP;
  const groups = withDates(rows, "latestAt").map(({ scanned: _, ...g }) => g);
  return { groups, capped };
}

/** The most dead letters one replay-all call moves: a larger backlog takes more calls (`remaining`). */
export const REPLAY_BATCH = 100;

/** Replays the oldest `limit` dead letters of one job, as replayTrigger does one (sql/replay.ts), in
 *  one statement; rows another transaction holds are left for the next call. Returns the replayed
 *  trigger ids (oldest first), the job's pool, and how many dead letters the job still has. */
export async function replayJobDeadLetters(
  db: Db,
  tenantId: string,
  jobId: string,
  limit = REPLAY_BATCH,
): Promise<{ ids: string[]; remaining: number; type: string | null }> {
  const rows = await query<{ ids: string[] | null; remaining: number; type: string | null }>(
    db,
    sql`
    WITH pick AS (
      SELECT t.id FROM triggers t
       WHERE t.job_id = ${jobId} AND t.tenant_id = ${tenantId} AND t.status = 'dead'
       ORDER BY t.id LIMIT ${limit}
         FOR UPDATE SKIP LOCKED
    ),
    t AS (${replayUpdate(sql`SELECT id FROM pick`, tenantId)}),
    ${reviveStatement(tenantId)}
    SELECT (SELECT array_agg(id ORDER BY id) FROM t) AS ids,
           (SELECT type FROM jobs WHERE id = ${jobId} AND tenant_id = ${tenantId}) AS type,
           -- This statement's snapshot still sees the replayed rows dead: they are taken off.
           (SELECT count(*)::int FROM triggers x
             WHERE x.job_id = ${jobId} AND x.tenant_id = ${tenantId} AND x.status = 'dead') - (SELECT count(*)::int FROM t)
             AS remaining`,
  );
  const r = rows[0];
  return { ids: r?.ids ?? [], remaining: Math.max(0, r?.remaining ?? 0), type: r?.type ?? null };
}

/** The replay of the dead triggers `ids` (a subquery) of one tenant: pending again, with a fresh
 *  attempt budget. Aliased `t` by its caller. Each table is read at the tenant, so that on a Citus
 *  cluster the statement runs on its shard group alone (docs/scaling.md). */
export function replayUpdate(ids: ReturnType<typeof sql>, tenantId: string) {
  return sql`
      UPDATE triggers t
         SET status = 'pending', reason = NULL, cancel_requested = false, finished_at = NULL, next_attempt_at = now(),
             max_attempts = t.attempt_count + j.max_attempts, replayed_at = now(), key = j.key, updated_at = now()
        FROM jobs j
       WHERE t.id IN (${ids}) AND t.tenant_id = ${tenantId} AND t.status = 'dead'
         AND j.tenant_id = ${tenantId} AND j.id = t.job_id
      RETURNING t.id, t.job_id, t.kind`;
}

/** A one-time job that failed because its trigger ended dead is active again until the trigger ends
 *  again (settle.ts, job_end: completed or failed), and live again: it counts against maxJobs, as the
 *  settle that ends it again takes it off. A cron job, or a one-time job in any other status, is left
 *  as is. Reads the replayed rows (of `tenantId`) from CTE `t`. */
export const reviveStatement = (tenantId: string) => sql`
    revived AS (
      UPDATE jobs j SET status = 'active', updated_at = now()
        FROM (SELECT DISTINCT job_id FROM t WHERE kind = 'scheduled') r
       WHERE j.tenant_id = ${tenantId} AND j.id = r.job_id AND j.cron IS NULL AND j.status = 'failed'
      RETURNING j.tenant_id
    ),
    recount AS (
      UPDATE tenant_counters c SET live_jobs = c.live_jobs + x.n
        FROM (SELECT count(*)::int AS n FROM revived) x
       WHERE c.tenant_id = ${tenantId} AND x.n > 0
    )`;
