// Handler pools: pool types whose jobs run in a handler worker (createWorker) rather than as webhooks.
// A worker stamps `pools.handler_seen_at` for each type it serves when it starts and then every
// HANDLER_HEARTBEAT_MS; the stamp is what lets the API accept a job with no target for that type, what
// keeps executors without the handler off the pool, and what the admin stats report as served or not.
import { isNotNull, sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { poolCounts } from "./cluster-reads.ts";
import { pools } from "../schema.ts";

export const HANDLER_HEARTBEAT_MS = 10_000;
/** A handler pool not stamped for this long has no live worker (three missed heartbeats). */
export const HANDLER_STALE_MS = 3 * HANDLER_HEARTBEAT_MS;

/** Stamps the types as served now, creating their pools (with the defaults) where missing. (The stamp
 *  is the inserted row's: Citus takes no function call in an ON CONFLICT's SET. On the distributed
 *  layout `pools` is a reference table, so each stamp is a write on every node: a heartbeat fails while
 *  one is down, and the pool reads as unserved after three.) */
export async function touchHandlerPools(db: Db, types: string[]): Promise<void> {
  if (types.length === 0) return;
  await db
    .insert(pools)
    .values(types.map((type) => ({ type, handlerSeenAt: sql`now()` })))
    .onConflictDoUpdate({ target: pools.type, set: { handlerSeenAt: sql`excluded.handler_seen_at` } });
}

/** Every type a worker has ever served. */
export async function handlerPoolTypes(db: Db): Promise<Set<string>> {
  const rows = await db.select({ type: pools.type }).from(pools).where(isNotNull(pools.handlerSeenAt));
  return new Set(rows.map((r) => r.type));
}

export interface HandlerPoolStatus {
  type: string;
  /** A worker stamped the pool within HANDLER_STALE_MS. */
  served: boolean;
  lastSeenAt: Date;
  /** Triggers of this type due now (waiting for a worker when `served` is false). */
  due: number;
}

export async function handlerPoolStatus(db: Db): Promise<HandlerPoolStatus[]> {
  const c = await poolCounts(db);
  const rows = await query<{ type: string; lastSeenAt: Date | string; served: boolean; due: number }>(
    db,
    sql`
    WITH ${c.with} seen AS (SELECT type, handler_seen_at FROM pools WHERE handler_seen_at IS NOT NULL)
    SELECT ty.type, ty.handler_seen_at AS "lastSeenAt",
      ty.handler_seen_at > now() - make_interval(secs => ${HANDLER_STALE_MS / 1000}) AS served, ${c.due} AS due
    FROM seen ty ${c.join} ORDER BY ty.type`,
  );
  return rows.map((r) => ({
    type: r.type,
    served: r.served,
    lastSeenAt: new Date(r.lastSeenAt),
    due: Number(r.due),
  }));
}
