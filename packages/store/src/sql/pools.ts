// Pool configuration (GET|PUT /v1/admin/pools/:type). Executors cache it and refresh periodically.
import { DEFAULT_POOL_SETTINGS, DEFAULT_RETRY } from "@fairway/core";
import { eq } from "drizzle-orm";
import type { Db } from "../db.ts";
import { pools } from "../schema.ts";

type PoolRow = typeof pools.$inferSelect;
export type PoolConfig = Omit<PoolRow, "vclock" | "updatedAt" | "handlerSeenAt">;

export const DEFAULT_POOL: Omit<PoolConfig, "type"> = {
  ...DEFAULT_POOL_SETTINGS,
  ...DEFAULT_RETRY,
  backoff: "exponential",
  jitter: "full",
  maxResponseBytes: 65_536,
  paused: false,
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

/** Writes a pool's config. Never changes whether it is paused: only pause/resume do (pool-pause.ts). */
export async function putPool(db: Db, cfg: PoolConfig): Promise<PoolConfig> {
  const { type, paused: _paused, ...rest } = cfg;
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
