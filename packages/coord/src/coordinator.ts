// The one narrow interface every coordination driver implements (docs/architecture.md).
// Redis is coordination, never correctness: every method here is an optimisation or a hint, and the
// caller must behave correctly (only slower or less fair) when a method throws. See index.ts.

export type CoordinatorKind = "memory" | "redis" | "upstash";

export interface LimitResult {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** 0 when allowed; otherwise how long until one token has refilled. */
  retryAfterMs: number;
}

export interface ReadyEntry {
  tenantId: string;
  dueAtMs: number;
}

export interface Coordinator {
  readonly kind: CoordinatorKind;
  /** Per-key API request limiter (token bucket, refill `limit` tokens per `windowMs`, capacity `limit`). Atomic (Lua on Redis). */
  limit(key: string, limit: number, windowMs: number, nowMs?: number): Promise<LimitResult>;
  /** Ready-tenant index for pool `type`: tenant has work due at dueAtMs. Keeps the EARLIEST due time. */
  markReady(type: string, tenantId: string, dueAtMs: number): Promise<void>;
  /** Tenants with score <= nowMs, earliest first (ties by tenant id), at most `limit`, with their scores. */
  readyTenants(type: string, nowMs: number, limit: number): Promise<ReadyEntry[]>;
  /**
   * Compare-and-set used by the claimer after it looked in Postgres: if the tenant's score is still
   * `expectedDueAtMs` (and no markReady touched the tenant since the last reschedule), set it to
   * `nextDueAtMs`, or remove the member when null. A concurrent markReady wins, so no due work is
   * ever hidden: the entry stays due and the claimer simply looks again next tick. Returns whether it applied.
   */
  reschedule(type: string, tenantId: string, expectedDueAtMs: number, nextDueAtMs: number | null): Promise<boolean>;
  /**
   * Rebuild the index of `type` from Postgres (after a flush, or on a fresh Redis) and set the marker.
   * Entries replace the index's scores, except that a member already present with an EARLIER score
   * keeps it: a markReady racing the rebuild may be newer than the caller's Postgres snapshot, and
   * dropping it would hide due work until the next rebuild. A stale leftover costs the claimer one
   * Postgres look, after which reschedule corrects it.
   */
  rebuildReady(type: string, entries: ReadyEntry[]): Promise<void>;
  /** Is the index of `type` present? (false after FLUSH or on a fresh Redis → caller rebuilds). */
  hasReadyIndex(type: string): Promise<boolean>;
  /** Wake-up hint for idle executors (a job was created due now). Best-effort. */
  wake(): Promise<void>;
  /** Listen for wake hints. Returns an unsubscribe function. Upstash REST has no push: a no-op there. */
  onWake(listener: () => void): () => void;
  close(): Promise<void>;
}

/** Argument checks shared by all drivers: a bad argument is a caller bug, so it throws (not "degraded"). */
export function checkLimitArgs(limit: number, windowMs: number): void {
  if (!Number.isFinite(limit) || limit < 1) throw new RangeError(`limit must be >= 1, got ${limit}`);
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new RangeError(`windowMs must be > 0, got ${windowMs}`);
}
