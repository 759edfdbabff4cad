// What the executor reports as it works, for metrics and the per-attempt log line. Runtime-neutral: the
// Node server plugs in prom-client (apps/server/src/metrics.ts); without an observer only the log line
// is written. Labels are pool types and outcomes, never a job or trigger id.
import type { DeliveryResult, Logger } from "@fairway/core";
import type { ClaimedTrigger, Settlement } from "@fairway/store";

interface AttemptReport {
  pool: string;
  tenantId: string;
  outcome: string;
  /** The settlement written: succeeded, pending (a retry), dead, … */
  status: string;
  durationMs: number;
  /** Start − scheduledFor; first attempts only (a retry starts late by design). */
  fireLagMs: number | null;
}

/** A trigger whose settlement this process wrote (the fenced write changed it). */
interface SettledReport {
  type: string;
  status: string;
}

export interface ExecutorObserver {
  attemptFinished?(a: AttemptReport): void;
  /** What this process's settles wrote: `by` "attempt" for its own attempts, "reaper" for leases it
   *  reaped (their owner died or stalled). Rows a fence refused are not in it. */
  settled?(rows: SettledReport[], by: "attempt" | "reaper"): void;
  claimed?(pool: string, ms: number, n: number): void;
  leaseRenewalFailed?(n: number): void;
  /** One notification attempt (notify.ts): sent, or failed (retried, or dead after its last attempt). */
  notificationFinished?(n: { event: string; channelType: string; status: "sent" | "failed" }): void;
}

/** One JSON log line and the observer's metrics for a finished attempt. */
export function reportAttempt(
  log: Logger,
  observer: ExecutorObserver | undefined,
  owner: string,
  t: ClaimedTrigger,
  r: DeliveryResult,
  s: Settlement,
  startedAt: Date,
): void {
  const durationMs = Math.round(r.durationMs);
  log.info("attempt finished", {
    event: "attempt_finished",
    jobId: t.jobId,
    triggerId: t.id,
    tenantId: t.tenantId,
    type: t.type,
    scheduledFor: t.scheduledFor.toISOString(),
    attempt: t.attempt,
    outcome: r.outcome,
    status: s.status,
    durationMs,
    executor: owner,
  });
  observer?.attemptFinished?.({
    pool: t.type,
    tenantId: t.tenantId,
    outcome: r.outcome,
    status: s.status,
    durationMs: r.durationMs,
    fireLagMs: t.attempt === 1 ? startedAt.getTime() - t.scheduledFor.getTime() : null,
  });
}
