// @fairway/coord — Redis is coordination, never correctness (docs/architecture.md).
//
// Every Coordinator method may throw when Redis is down, slow or flushed mid-call; drivers make that
// happen fast (redis://: 500 ms command timeout, no offline queue; Upstash: 1 s, no retry loop).
// A thrown error means "degraded", and each caller degrades like this — never by failing the work:
//   - limit()          → rate limiting FAILS OPEN: the API serves the request (and logs). Postgres
//                        per-tenant caps still bound what a tenant can run.
//   - markReady()      → ignored: the claimer falls back to a Postgres scan of due tenants, which
//                        finds the work anyway.
//   - readyTenants() / reschedule() / hasReadyIndex() / rebuildReady()
//                      → the claimer picks tenants with a Postgres scan this tick (slower, same result)
//                        and retries the index next tick; hasReadyIndex() false → rebuildReady().
//   - wake() / onWake()→ ignored: idle executors wake on their ≤1 s poll instead.
// Nothing is lost or run twice either way: claims, leases and fencing live in Postgres.

export type { Coordinator, CoordinatorKind, LimitResult, ReadyEntry } from "./coordinator.ts";
export { createMemoryCoordinator } from "./memory-driver.ts";
export { createRedisCoordinator, type RedisCoordinatorOptions } from "./redis-driver.ts";
export { createUpstashCoordinator, type UpstashCoordinatorOptions } from "./upstash-driver.ts";
export { createCoordinatorFromEnv } from "./from-env.ts";
export { DEFAULT_PREFIX } from "./keys.ts";
