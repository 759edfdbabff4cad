// Pausing a pool (POST /v1/admin/pools/:type/pause | resume): the claim takes nothing of a paused type
// (its first statement finds no candidate tenant, claim.ts), so nothing starts; what is running
// finishes and settles, retries and new fires queue as pending, and all of it is claimed again once
// resumed. Nothing is lost or moved: pausing only changes the pools row.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { poolCounts } from "./cluster-reads.ts";
import { pools } from "../schema.ts";
import { DEFAULT_POOL, getPool, type PoolConfig } from "./pools.ts";

/** Pauses or resumes the type's pool (creating its row with the defaults if it has none). */
export async function setPoolPaused(db: Db, type: string, paused: boolean): Promise<PoolConfig> {
  await db
    .insert(pools)
    .values({ ...DEFAULT_POOL, type, paused })
    .onConflictDoUpdate({ target: pools.type, set: { paused, updatedAt: new Date() } });
  return getPool(db, type);
}

export interface PoolStats {
  type: string;
  paused: boolean;
  concurrency: number;
  /** Triggers of the type running now (claimed and not yet settled), over all tenants. */
  running: number;
  /** Pending triggers that are due now, and all pending ones. */
  due: number;
  pending: number;
}

/** Per pool: its config's pause flag and concurrency, and its running, due and pending work. Types with
 *  work but no pools row are listed with the defaults. */
export async function poolStats(db: Db): Promise<PoolStats[]> {
  const c = await poolCounts(db);
  const rows = await query<PoolStats>(
    db,
    sql`
    WITH ${c.with} types AS (SELECT type FROM pools UNION SELECT DISTINCT type FROM tenant_pools)
    SELECT ty.type, coalesce(p.paused, false) AS paused,
           coalesce(p.concurrency, ${DEFAULT_POOL.concurrency})::int AS concurrency,
           ${c.running} AS running, ${c.due} AS due, ${c.pending} AS pending
      FROM types ty LEFT JOIN pools p ON p.type = ty.type ${c.join}
     ORDER BY ty.type`,
  );
  return rows;
}
