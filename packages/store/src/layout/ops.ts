// The store's operations whose statements differ by layout, as callers call them: each asks the layout
// of its pool (read once, detect.ts) and runs that layout's implementation (single.ts, per-tenant.ts).
import type { Db } from "../db.ts";
import type { ClaimedTrigger, ClaimInput } from "../sql/claim.ts";
import type { ExpiredLease } from "../sql/reap.ts";
import type { TenantDue } from "../sql/ready-index.ts";
import { pendingOfTenants } from "../sql/ready-index.ts";
import type { Settled, Settlement } from "../sql/settle.ts";
import type { TenantRow } from "../sql/tenants.ts";
import { layoutOf } from "./index.ts";

/** A claim as the layout of `db` makes one (Layout.claim): on one PostgreSQL, lock candidates, then
 *  claim each one's fair share: one transaction, one round trip on postgres.js. */
export async function claim(db: Db, input: ClaimInput): Promise<ClaimedTrigger[]> {
  return (await (await layoutOf(db)).claim(db, input)).claimed;
}

/** Settle `items` as the layout of `db` does: one transaction, or one per tenant. */
export async function settle(db: Db, items: Settlement[]): Promise<Settled[]> {
  if (items.length === 0) return [];
  return (await layoutOf(db)).settle(db, items);
}

/** Running triggers whose lease expired, found through the claims' lease rows (schema.ts, leases):
 *  only claims whose lease ran out are looked into, and each trigger's own lease decides. */
export async function findExpiredLeases(db: Db, limit = 500): Promise<ExpiredLease[]> {
  return (await layoutOf(db)).findExpiredLeases(db, limit);
}

/** Deletes the lease rows of claims whose lease ran out and which have no trigger left running under
 *  their token: every trigger settled, released or reaped. Returns how many went. */
export async function dropSpentLeases(db: Db, limit = 100): Promise<number> {
  return (await layoutOf(db)).dropSpentLeases(db, limit);
}

/** Marks executors whose heartbeat stopped for longer than their timeout as lost, and cuts the leases
 *  of every executor lost in the last `recentMs` (a claim that committed after the mark included) to
 *  now. Returns how many running triggers' leases it cut: the reaper should run. */
export async function expireLostExecutors(db: Db, recentMs = 600_000): Promise<{ lost: string[]; cut: number }> {
  return (await layoutOf(db)).expireLostExecutors(db, recentMs);
}

/** Look a key up by its hash; revoked keys never match. Records last use at most once a minute. Runs on
 *  every tenant request, so it is one prepared statement (a drizzle builder is parsed and planned each
 *  time); nothing is cached, so a revoked key is refused on its next request in every process.
 *
 *  On a Citus cluster the key (a reference table, read on the coordinator) is found first and then its
 *  tenant on its own shard: a join would read every shard, and one worker down would refuse every
 *  tenant. Recording last use writes the reference table on every node; with one down that write
 *  fails, and the request goes on without it. */
export async function authenticateKey(db: Db, hash: string): Promise<{ keyId: string; tenant: TenantRow } | null> {
  return (await layoutOf(db)).authenticateKey(db, hash);
}

/** Earliest pending trigger per tenant in `type`: for the given tenants (as the layout reads them), or
 *  for every tenant (rebuild). */
export async function pendingByTenant(db: Db, type: string, tenantIds?: string[]): Promise<TenantDue[]> {
  if (tenantIds) return (await layoutOf(db)).pendingByTenant(db, type, tenantIds);
  return pendingOfTenants(db, type, undefined, false);
}
