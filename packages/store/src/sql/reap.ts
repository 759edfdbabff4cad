// The reaper's reads: running triggers whose lease expired (the owner died or stalled). The executor
// decides each one's fate with core's retry decision and applies it through settle() with reap=true,
// so the write is fenced by the stale token AND by the lease still being expired: an owner that
// renews or settles first wins, and the reaper changes nothing.
//
// On a Citus cluster (docs/scaling.md) both statements read every shard: the leases, triggers and jobs
// are joined on their tenant too, so each shard group answers for its own rows (a colocated join, no
// data moved between nodes). That is a statement per reap interval, not per claim or settle; what the
// reaper then writes it writes per tenant (executor reaper.ts).
import { sql } from "drizzle-orm";
import { query, withDates, type Db } from "../db.ts";

export interface ExpiredLease {
  id: string;
  tenantId: string;
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

/** findExpiredLeases() as a layout runs it. `colocated` (per-tenant layout): a lease row always names
 *  its tenant, and the joins name it too; on one PostgreSQL a claim across tenants' has none. */
export async function findExpired(db: Db, limit: number, colocated: boolean): Promise<ExpiredLease[]> {
  const on = colocated
    ? { t: sql`t.tenant_id = l.tenant_id AND`, j: sql`j.tenant_id = t.tenant_id AND` }
    : { t: sql``, j: sql`` };
  const rows = await query<ExpiredLease>(
    db,
    sql`
    SELECT t.id, t.tenant_id AS "tenantId", t.lease_token AS "leaseToken", t.lease_owner AS "leaseOwner",
           t.lease_expires_at AS "leaseExpiresAt", t.attempt_count AS attempt,
           t.max_attempts AS "maxAttempts", j.initial_delay_ms AS "initialDelayMs",
           j.max_delay_ms AS "maxDelayMs", coalesce(t.sending_attempt = t.attempt_count, false) AS sending
      FROM leases l
      JOIN triggers t ON ${on.t} t.id = ANY (l.trigger_ids) AND t.lease_token = l.token
      JOIN jobs j ON ${on.j} j.id = t.job_id
     WHERE l.expires_at <= now() AND t.status = 'running' AND t.lease_expires_at <= now()
     ORDER BY t.lease_expires_at
     LIMIT ${limit}`,
  );
  return withDates(rows, "leaseExpiresAt");
}

/** dropSpentLeases() as a layout runs it. */
export async function dropSpent(db: Db, limit: number, colocated: boolean): Promise<number> {
  const rows = await query<{ token: string }>(db, dropSpentStatement(colocated, limit));
  return rows.length;
}

/** On the layout the rows are named by tenant and token, and each trigger looked for at its tenant (a
 *  colocated join); the first spent rows are read from every shard first (a subplan). */
function dropSpentStatement(colocated: boolean, limit: number) {
  const key = colocated ? sql`(l.tenant_id, l.token)` : sql`l.token`;
  const picked = colocated ? sql`x.tenant_id, x.token` : sql`x.token`;
  const atTenant = colocated ? sql`t.tenant_id = l.tenant_id AND` : sql``;
  return sql`
    DELETE FROM leases l
     WHERE ${key} IN (SELECT ${picked} FROM leases x WHERE x.expires_at <= now() ORDER BY x.expires_at LIMIT ${limit})
       AND NOT EXISTS (SELECT 1 FROM triggers t
                        WHERE ${atTenant} t.id = ANY (l.trigger_ids) AND t.lease_token = l.token AND t.status = 'running')
    RETURNING l.token`;
}
