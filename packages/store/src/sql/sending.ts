// At-most-once delivery, phase one: before an at_most_once trigger's request leaves, its attempt is
// recorded as sending, fenced by its lease. From then on it is never sent again: if its lease is lost
// (expiry, a lost executor) the reaper ends it `unknown` with reason lost_in_flight (reap.ts), and a
// graceful stop that aborts it ends it the same way (release.ts). Phase two is the ordinary settle.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { scopeTo } from "../layout/scope.ts";

/** True when recorded; false when the lease is no longer held (then nothing may be sent). `tenantId`:
 *  the trigger's, named so that on a Citus cluster the update goes to its shard alone. */
export async function markSending(
  db: Db,
  t: { id: string; leaseToken: string; attempt: number },
  tenantId?: string,
): Promise<boolean> {
  const rows = await query<{ id: string }>(db, sendingStatement(t, tenantId));
  return rows.length === 1;
}

export function sendingStatement(t: { id: string; leaseToken: string; attempt: number }, tenantId?: string) {
  return sql`UPDATE triggers SET sending_attempt = attempt_count
         WHERE id = ${t.id} AND lease_token = ${t.leaseToken} AND status = 'running'
           AND attempt_count = ${t.attempt} AND lease_expires_at > now() ${scopeTo(tenantId)("triggers")}
        RETURNING id`;
}
