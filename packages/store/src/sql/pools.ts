// Pool configuration (GET|PUT /v1/admin/pools/:type). Executors cache it and refresh periodically.
import { eq } from "drizzle-orm";
import type { Db } from "../db.ts";
import { pools } from "../schema.ts";

export type PoolRow = typeof pools.$inferSelect;
export type PoolConfig = Omit<PoolRow, "vclock" | "updatedAt" | "handlerSeenAt">;

export const DEFAULT_POOL: Omit<PoolConfig, "type"> = {
  concurrency: 50,
  timeoutMs: 30_000,
  leaseMs: 60_000,
  maxAttempts: 5,
  initialDelayMs: 1000,
  maxDelayMs: 3_600_000,
};

/** The pool's row, or null when the type has none yet. */
export async function findPool(db: Db, type: string): Promise<PoolConfig | null> {
  const [row] = await db.select().from(pools).where(eq(pools.type, type));
  return row ? strip(row) : null;
}

/** The pool's config, defaults when it has no row yet. */
export async function getPool(db: Db, type: string): Promise<PoolConfig> {
  return (await findPool(db, type)) ?? { type, ...DEFAULT_POOL };
}

export async function listPools(db: Db): Promise<PoolConfig[]> {
  return (await db.select().from(pools)).map(strip);
}

export async function putPool(db: Db, cfg: PoolConfig): Promise<PoolConfig> {
  const { type, ...rest } = cfg;
  const [row] = await db
    .insert(pools)
    .values(cfg)
    .onConflictDoUpdate({ target: pools.type, set: { ...rest, updatedAt: new Date() } })
    .returning();
  return strip(row);
}

function strip(row: PoolRow): PoolConfig {
  const { vclock: _v, updatedAt: _u, handlerSeenAt: _h, ...cfg } = row;
  return cfg;
}
