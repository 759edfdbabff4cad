// The retry decision (docs/architecture.md): a pure function from one attempt's outcome to what happens next.
// Settle applies it in one fenced transaction; nothing here reads a clock except through the caller.
import type { AttemptOutcome, RetryPolicy } from "./types.ts";

export type RetryDecision =
  | { kind: "done" }
  | { kind: "retry"; delayMs: number }
  | { kind: "dead"; reason: string; pauseJob: boolean };

export interface RetryInput {
  outcome: AttemptOutcome;
  httpStatus: number | null;
  retryAfterMs: number | null;
  /** 1-based: the attempt that just ended. */
  attempt: number;
  policy: RetryPolicy;
}

type Class = { kind: "done" } | { kind: "retryable" } | { kind: "dead"; reason: string; pauseJob: boolean };

// Outcomes other than http_error classify on their own.
const OUTCOME_CLASS: Record<Exclude<AttemptOutcome, "http_error">, Class> = {
  success: { kind: "done" },
  timeout: { kind: "retryable" },
  network_error: { kind: "retryable" },
  handler_error: { kind: "retryable" },
  lease_expired: { kind: "retryable" }, // the worker vanished, not the target's fault
  secret_missing: { kind: "dead", reason: "secret_missing", pauseJob: false }, // no retry brings it back
  forbidden_target: { kind: "dead", reason: "forbidden_target", pauseJob: false }, // nor here: a setting does
  lost_in_flight: { kind: "dead", reason: "lost_in_flight", pauseJob: false }, // at-most-once: never resent
  // Never settled through here: the executor records a cancelled run itself (store/sql/on-busy.ts).
  cancelled: { kind: "dead", reason: "cancelled", pauseJob: false },
};

// Specific statuses first, then by hundreds. 408/429/5xx are the target asking us to come back;
// 410 Gone means the endpoint is retired for good, so the job is paused rather than failing forever.
// 3xx are dead because redirects are never followed (they could point at private addresses).
const STATUS_CLASS: Record<number, Class> = {
  408: { kind: "retryable" },
  429: { kind: "retryable" },
  410: { kind: "dead", reason: "http_410", pauseJob: true },
};

function classifyStatus(status: number | null): Class {
  if (status === null || !Number.isInteger(status)) return { kind: "retryable" }; // no status: treat like a network error
  const exact = STATUS_CLASS[status];
  if (exact) return exact;
  if (status >= 200 && status < 300) return { kind: "done" };
  if (status >= 500 && status < 600) return { kind: "retryable" };
  return { kind: "dead", reason: `http_${status}`, pauseJob: false };
}

export function decideRetry(input: RetryInput, random: () => number = Math.random): RetryDecision {
  const cls = input.outcome === "http_error" ? classifyStatus(input.httpStatus) : OUTCOME_CLASS[input.outcome];
  if (cls.kind === "done") return { kind: "done" };
  if (cls.kind === "dead") return { kind: "dead", reason: cls.reason, pauseJob: cls.pauseJob };
  if (input.attempt >= input.policy.maxAttempts) return { kind: "dead", reason: "attempts_exhausted", pauseJob: false };
  const backoff = backoffDelay(input.attempt, input.policy, random);
  if (input.retryAfterMs === null || !(input.retryAfterMs >= 0)) return { kind: "retry", delayMs: backoff };
  // Retry-After is honoured, but never beyond our cap (a target cannot park a trigger for a week).
  const delayMs = Math.min(input.policy.maxDelayMs, Math.max(input.retryAfterMs, backoff));
  return { kind: "retry", delayMs };
}

/** The delay before the retry after `attempt` (1-based), before jitter: initial·2^(attempt−1)
 *  (exponential), initial·attempt (linear) or initial (fixed), never above maxDelayMs. */
function backoffCeiling(attempt: number, policy: RetryPolicy): number {
  const n = Math.max(1, attempt);
  const grown =
    policy.backoff === "fixed"
      ? policy.initialDelayMs
      : policy.backoff === "linear"
        ? policy.initialDelayMs * n
        : policy.initialDelayMs * 2 ** Math.min(n - 1, 1023); // 2^1024 = Infinity; min() below handles it
  const ceiling = Math.min(policy.maxDelayMs, grown);
  return Math.max(ceiling, 0);
}

/**
 * Full jitter (AWS "Exponential Backoff and Jitter", the default): uniform in [0, ceiling). Spreads a
 * thundering herd of retries better than equal or decorrelated jitter. `jitter: "none"`: the ceiling.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = backoffCeiling(attempt, policy);
  if (policy.jitter === "none" || ceiling === 0) return Math.floor(ceiling);
  const r = Math.min(Math.max(random(), 0), 1 - Number.EPSILON);
  return Math.floor(r * ceiling);
}

/** Parses Retry-After (delta-seconds or HTTP-date) to ms from now. Garbage → null; in the past → 0. */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | null {
  if (header == null) return null;
  const v = header.trim();
  if (v === "") return null;
  if (/^-?\d+$/.test(v)) {
    const secs = Number(v);
    return secs <= 0 ? 0 : secs * 1000;
  }
  // HTTP-date (IMF-fixdate, and the obsolete RFC 850 / asctime forms Date.parse also reads).
  // Require a letter so bare numbers like "1.5" are not read as dates.
  if (!/[a-z]/i.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}
