// Replay a dead letter: the same trigger (same id, so the same webhook-id) goes back to pending with a
// fresh attempt budget; its attempt history is kept and numbering continues. It takes its job's fairness
// key as it is now, as a run-now would.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";

export async function replayTrigger(db: Db, tenantId: string, triggerId: string): Promise<{ id: string } | null> {
  // A one-time job that failed because this trigger ended dead is active again until the trigger ends
  // again (settle.ts, job_end: completed or failed), and live again: it counts against maxJobs, as the
  // settle that ends it again takes it off. A cron job, or a one-time job in any other status, is left as is.
  const rows = await query<{ id: string }>(
    db,
    sql`
    WITH t AS (
      UPDATE triggers t
         SET status = 'pending', reason = NULL, cancel_requested = false, finished_at = NULL, next_attempt_at = now(),
             max_attempts = t.attempt_count + j.max_attempts, replayed_at = now(), key = j.key, updated_at = now()
        FROM jobs j
       WHERE t.id = ${triggerId} AND t.tenant_id = ${tenantId} AND t.status = 'dead' AND j.id = t.job_id
      RETURNING t.id, t.job_id, t.kind
    ),
    revived AS (
      UPDATE jobs j SET status = 'active', updated_at = now()
        FROM t
       WHERE j.id = t.job_id AND t.kind = 'scheduled' AND j.cron IS NULL AND j.status = 'failed'
      RETURNING j.tenant_id
    ),
    recount AS (
      UPDATE tenant_counters c SET live_jobs = c.live_jobs + 1
        FROM revived r WHERE c.tenant_id = r.tenant_id
    )
    SELECT id FROM t`,
  );
  return rows[0] ?? null;
}
