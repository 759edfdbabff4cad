// Defaults that more than one package relies on, in one place: the schema's column defaults, the
// store's pool defaults, the API's job defaults and the fair-share estimates all read these.
import type { RetryPolicy } from "./types.ts";

/** A pool's retry policy until its admin sets one: 5 attempts, backoff from 1 s up to 1 h. */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, initialDelayMs: 1000, maxDelayMs: 3_600_000 };

/** A pool's settings until its admin sets them (PUT /v1/admin/pools/:type). */
export const DEFAULT_POOL_SETTINGS = { concurrency: 50, timeoutMs: 30_000, leaseMs: 60_000 } as const;

/** How far back missed cron fires are caught up after downtime: one day. */
export const DEFAULT_CATCHUP_WINDOW_MS = 86_400_000;

/** A tenant's estimated run time in a pool before any run has been measured (fair-share charge). */
export const DEFAULT_COST_MS = 100;

/** Weight of the newest measurement in the run-time estimate (EWMA). */
export const COST_EWMA_ALPHA = 0.2;

/** What a tenant's quota settings may be. The API, the dashboard and the CLI refuse anything outside;
 *  the claim clamps a stored value into the same range (store sql/columns.ts), so a value stored
 *  some other way cannot make a claim's arithmetic overflow or underflow and fail every tenant's tick. */
export const TENANT_BOUNDS = {
  weight: { min: 0.01, max: 1000 },
  ratePerSecond: { min: 0.01, max: 100_000 },
  burst: { min: 1, max: 1_000_000 },
  maxInFlight: { min: 1, max: 100_000 },
} as const;

/** Debounced one-time jobs (docs/flow-control.md): the quiet period after the latest create, and the
 *  cap on how late the first create's job may fire. */
export const DEBOUNCE_BOUNDS = {
  periodMs: { min: 100, max: 7 * 86_400_000 },
  maxWaitMs: { min: 100, max: 30 * 86_400_000 },
} as const;

/** Fires one backfill request may write (docs/flow-control.md); a larger range is refused whole. */
export const BACKFILL_MAX_FIRES = 1000;
