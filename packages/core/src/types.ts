// The vocabulary of Fairway. Every package speaks these types.

export type JobStatus = "active" | "paused" | "completed" | "failed" | "cancelled";
export type OverlapPolicy = "allow" | "skip" | "buffer_one";
export type MisfirePolicy = "fire_once" | "skip" | "fire_all";

/** What one execution of a trigger ended as. Stored in the attempt's record (the `attempts` view). */
export type AttemptOutcome =
  | "success" // 2xx, or a handler that resolved
  | "http_error" // a non-2xx status
  | "timeout" // the pool's / job's timeout elapsed
  | "network_error" // connect refused, reset, DNS failure, blocked address
  | "handler_error" // an in-process handler threw
  | "lease_expired" // the worker holding the lease vanished (reaper)
  | "secret_missing" // the target names a secret deleted since the job was saved (never retried)
  | "forbidden_target" // the target is a private address and private targets are not allowed (never retried)
  | "lost_in_flight" // at-most-once: the lease was lost after the request may have left (never resent)
  | "cancelled"; // aborted for a newer trigger of its key (onBusy cancel_running; never retried)

export interface RetryPolicy {
  /** Total attempts including the first. Default 5. */
  maxAttempts: number;
  /** First backoff ceiling. Default 1000 ms. */
  initialDelayMs: number;
  /** Backoff cap, also the cap for Retry-After. Default 1 h. */
  maxDelayMs: number;
  /** How the delay grows with the attempt number. Default exponential. */
  backoff?: BackoffStrategy;
  /** full: uniform in [0, delay); none: the delay itself. Default full. */
  jitter?: JitterMode;
}

type BackoffStrategy = "exponential" | "linear" | "fixed";
type JitterMode = "full" | "none";

export type HttpMethod = "POST" | "PUT" | "PATCH" | "GET" | "HEAD" | "DELETE";

export interface WebhookTarget {
  url: string;
  method?: HttpMethod;
  headers?: Record<string, string>;
  /** Sent verbatim: a string as is, anything else as JSON. Absent: the delivery envelope. */
  body?: unknown;
}

/** A request as an attempt records it: as sent, but with `${secrets.NAME}` placeholders where secret
 *  values went, and the body cut at a bound (`truncated`). */
export interface AttemptRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
  truncated?: true;
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
  /** The request sent (null when none was: a handler, or a delivery that failed before sending). */
  request?: AttemptRequest | null;
  /** The response's headers (lower-cased names), when one came. */
  responseHeaders?: Record<string, string> | null;
  /** The response body was longer than the pool keeps; responseBody is its start. */
  responseTruncated?: boolean;
  /** A handler's ctx.log lines, cut at the attempt's bound (truncated: the cut was made). */
  logs?: { lines: string[]; truncated: boolean } | null;
}
