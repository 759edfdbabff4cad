// Replay a dead letter: the same trigger (same id, so the same webhook-id) goes back to pending with a
// fresh attempt budget; its attempt history is kept and numbering continues. It takes its job's fairness
// key as it is now, as a run-now would. A failed one-time job is revived (job-health.ts, reviveStatement).
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { replayUpdate, reviveStatement } from "./job-health.ts";

export async function replayTrigger(db: Db, tenantId: string, triggerId: string): Promise<{ id: string } | null> {
  const rows = await query<{ id: string }>(
    db,
    sql`
    WITH t AS (${replayUpdate(sql`${triggerId}::text`, tenantId)}),
    ${reviveStatement(tenantId)}
    SELECT id FROM t`,
  );
  return rows[0] ?? null;
}
