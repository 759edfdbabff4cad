// Release claimed-but-unstarted triggers on graceful stop: back to pending, the claim's attempt
// number given back, no attempt row (nothing ran). Fenced like settle.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";

export async function releaseLeases(db: Db, leases: Array<{ id: string; leaseToken: string }>): Promise<number> {
  if (leases.length === 0) return 0;
  const input = JSON.stringify(leases.map((l) => ({ id: l.id, token: l.leaseToken })));
  const rows = await query<{ id: string }>(
    db,
    sql`
    UPDATE triggers t
       SET status = 'pending', attempt_count = t.attempt_count - 1,
           lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, updated_at = now()
      FROM jsonb_to_recordset(${input}::jsonb) AS x(id text, token text)
     WHERE t.id = x.id AND t.lease_token = x.token AND t.status = 'running'
    RETURNING t.id`,
  );
  return rows.length;
}
