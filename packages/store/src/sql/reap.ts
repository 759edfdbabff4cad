// The reaper's reads: running triggers whose lease expired (the owner died or stalled). The executor
// decides each one's fate with core's retry decision and applies it through settle() with reap=true,
// so the write is fenced by the stale token AND by the lease still being expired: an owner that
// renews or settles first wins, and the reaper changes nothing.
import { sql } from "drizzle-orm";
import { query, withDates, type Db } from "../db.ts";

export interface ExpiredLease {
  id: string;
  leaseToken: string;
  leaseOwner: string | null;
  leaseExpiresAt: Date;
  attempt: number;
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** At-most-once and recorded as sending in this attempt (sending.ts): it may have been delivered. */
  sending: boolean;
}

/** Running triggers whose lease expired, found through the claims' lease rows (schema.ts, leases):
 *  only claims whose lease ran out are looked into, and each trigger's own lease decides. */
export async function findExpiredLeases(db: Db, limit = 500): Promise<ExpiredLease[]> {
  const rows = await query<ExpiredLease>(
    db,
    sql`
    SELECT t.id, t.lease_token AS "leaseToken", t.lease_owner AS "leaseOwner",
           t.lease_expires_at AS "leaseExpiresAt", t.attempt_count AS attempt,
           t.max_attempts AS "maxAttempts", j.initial_delay_ms AS "initialDelayMs",
           j.max_delay_ms AS "maxDelayMs", coalesce(t.sending_attempt = t.attempt_count, false) AS sending
      FROM leases l
      JOIN triggers t ON t.id = ANY (l.trigger_ids) AND t.lease_token = l.token
      JOIN jobs j ON j.id = t.job_id
     WHERE l.expires_at <= now() AND t.status = 'running' AND t.lease_expires_at <= now()
     ORDER BY t.lease_expires_at
     LIMIT ${limit}`,
  );
  return withDates(rows, "leaseExpiresAt");
}

/** Deletes the lease rows of claims whose lease ran out and which have no trigger left running under
 *  their token: every trigger settled, released or reaped. Returns how many went. */
export async function dropSpentLeases(db: Db, limit = 100): Promise<number> {
  const rows = await query<{ token: string }>(
    db,
    sql`
    DELETE FROM leases l
     WHERE l.token IN (SELECT x.token FROM leases x WHERE x.expires_at <= now() ORDER BY x.expires_at LIMIT ${limit})
       AND NOT EXISTS (SELECT 1 FROM triggers t
                        WHERE t.id = ANY (l.trigger_ids) AND t.lease_token = l.token AND t.status = 'running')
    RETURNING l.token`,
  );
  return rows.length;
}
