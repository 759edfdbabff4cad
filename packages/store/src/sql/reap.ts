// The reaper's read: running triggers whose lease expired (the owner died or stalled). The executor
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
}

export async function findExpiredLeases(db: Db, limit = 500): Promise<ExpiredLease[]> {
  const rows = await query<ExpiredLease>(
    db,
    sql`
    SELECT t.id, t.lease_token AS "leaseToken", t.lease_owner AS "leaseOwner",
           t.lease_expires_at AS "leaseExpiresAt", t.attempt_count AS attempt,
           t.max_attempts AS "maxAttempts", j.initial_delay_ms AS "initialDelayMs",
           j.max_delay_ms AS "maxDelayMs"
      FROM triggers t JOIN jobs j ON j.id = t.job_id
     WHERE t.status = 'running' AND t.lease_expires_at <= now()
     ORDER BY t.lease_expires_at
     LIMIT ${limit}`,
  );
  return withDates(rows, "leaseExpiresAt");
}
