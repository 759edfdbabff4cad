// The vocabulary of Fairway. Every package speaks these types.

export type JobStatus = "active" | "paused" | "completed" | "cancelled";
export type TriggerStatus = "pending" | "running" | "succeeded" | "dead" | "skipped" | "cancelled";
export type OverlapPolicy = "allow" | "skip" | "buffer_one";
export type MisfirePolicy = "fire_once" | "skip" | "fire_all";
export type TenantStatus = "active" | "suspended";

/** What one execution of a trigger ended as. Stored in the attempt's record (the `attempts` view). */
export type AttemptOutcome =
  | "success" // 2xx, or a handler that resolved
  | "http_error" // a non-2xx status
  | "timeout" // the pool's / job's timeout elapsed
  | "network_error" // connect refused, reset, DNS failure, blocked address
  | "handler_error" // an in-process handler threw
  | "lease_expired"; // the worker holding the lease vanished (reaper)

export interface RetryPolicy {
  /** Total attempts including the first. Default 5. */
  maxAttempts: number;
  /** First backoff ceiling. Default 1000 ms. */
  initialDelayMs: number;
  /** Backoff cap, also the cap for Retry-After. Default 1 h. */
  maxDelayMs: number;
}

/** The result of one delivery or handler run: a value, never thrown. */
export interface DeliveryResult {
  outcome: AttemptOutcome;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
  /** Truncated response body, for the attempt history. */
  responseBody: string | null;
  /** Parsed Retry-After in ms, when the target sent one. */
  retryAfterMs: number | null;
}
