// Workers may not share a socket between invocations, so every fetch and every scheduled run opens
// its own postgres.js client on the Hyperdrive connection string (Hyperdrive keeps the real pool to
// Postgres warm) and closes it when the invocation's work is done.
//
// Pool sizes: a Worker invocation may hold at most 6 simultaneous outgoing connections (Postgres
// sockets and webhook fetches together); more are queued by the runtime until one closes. Idle
// Postgres sockets never close on their own, so the pools stay small enough to leave room for
// webhooks: the executor's loop, settler and lease renewal share 2 connections and leave 4 for
// concurrent deliveries.
import type { ApiCoordinator } from "@fairway/api";
import { createUpstashCoordinator, type Coordinator } from "@fairway/coord/upstash";
import { connectPostgres, type Store } from "@fairway/store";
import type { EdgeConfig } from "./env.ts";

export const API_DB_POOL = 3;
export const EXECUTOR_DB_POOL = 2;

export function openStore(cfg: EdgeConfig, max: number): Store {
  return connectPostgres(cfg.databaseUrl, { max });
}

/** Upstash REST, the only Redis a Worker can reach (no TCP redis://); null when not configured. */
export function upstashFor(cfg: EdgeConfig): Coordinator | null {
  return cfg.upstash ? createUpstashCoordinator(cfg.upstash) : null;
}

/** Without Upstash there is no state shared across isolates: API rate limiting is off (Postgres
 *  quotas and in-flight caps still hold), and the hints for executors are dropped — the executor then
 *  finds due tenants in Postgres on every claim, which is correct, only costlier. */
export const noCoordination: ApiCoordinator = {
  limit: async () => ({ allowed: true, remaining: Number.MAX_SAFE_INTEGER, retryAfterMs: 0 }),
  wake: async () => {},
  markReady: async () => {},
};
