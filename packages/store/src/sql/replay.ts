// Replay a dead letter: the same trigger (same id, so the same webhook-id) goes back to pending with a
// fresh attempt budget; its attempt history is kept and numbering continues. It takes its job's fairness
// key as it is now, as a run-now would.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";

export async function replayTrigger(db: Db, tenantId: string, triggerId: string): Promise<{ id: string } | null> {
  const rows = await query<{ id: string }>(
    db,
    sql`
    UPDATE triggers t
       SET status = 'pending', reason = NULL, finished_at = NULL, next_attempt_at = now(),
           max_attempts = t.attempt_count + j.max_attempts, replayed_at = now(), key = j.key, updated_at = now()
      FROM jobs j
     WHERE t.id = ${triggerId} AND t.tenant_id = ${tenantId} AND t.status = 'dead' AND j.id = t.job_id
    RETURNING t.id`,
  );
  return rows[0] ?? null;
}
