// The Node server's own metrics (prom-client): what only the process sees — attempt durations, fire
// lag, claim time, outcomes, renewal failures — as histograms and counters. GET /metrics appends them
// to the database-derived gauges (packages/api routes/metrics.ts). Labels: pool and outcome only.
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { ExecutorObserver } from "@fairway/executor";

/** Seconds: from a millisecond no-op to a webhook near its timeout. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds late: on the second, a poll late, a backlog, an outage. */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];

export interface ServerMetrics {
  registry: Registry;
  observer: ExecutorObserver;
}

export function createServerMetrics(): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "fairway_process_" });
  const fireLag = new Histogram({
    name: "fairway_fire_lag_seconds",
    help: "First attempt start minus its scheduled time, by pool.",
    labelNames: ["pool"],
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "fairway_attempt_duration_seconds",
    help: "Attempt duration (delivery or handler), by pool and outcome.",
    labelNames: ["pool", "outcome"],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const claim = new Histogram({
    name: "fairway_claim_duration_seconds",
    help: "Claim round trip of claims that got work, by pool.",
    labelNames: ["pool"],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const attempts = new Counter({
    name: "fairway_attempts_total",
    help: "Finished attempts, by pool and outcome.",
    labelNames: ["pool", "outcome"],
    registers: [registry],
  });
  const dead = new Counter({
    name: "fairway_dead_letters_total",
    help: "Triggers this process's attempts sent to the dead letters, by pool.",
    labelNames: ["pool"],
    registers: [registry],
  });
  const renewalFailures = new Counter({
    name: "fairway_lease_renewal_failures_total",
    help: "Leases whose renewal statement failed.",
    registers: [registry],
  });
  const notifications = new Counter({
    name: "fairway_notifications_total",
    help: "Notification attempts by this process, by event, channel type and status (sent or failed).",
    labelNames: ["event", "channel_type", "status"],
    registers: [registry],
  });
  return {
    registry,
    observer: {
      notificationFinished(n) {
        notifications.inc({ event: n.event, channel_type: n.channelType, status: n.status });
      },
      attemptFinished(a) {
        duration.observe({ pool: a.pool, outcome: a.outcome }, a.durationMs / 1000);
        attempts.inc({ pool: a.pool, outcome: a.outcome });
        if (a.fireLagMs !== null) fireLag.observe({ pool: a.pool }, Math.max(0, a.fireLagMs) / 1000);
        if (a.status === "dead") dead.inc({ pool: a.pool });
      },
      claimed(pool, ms) {
        claim.observe({ pool }, ms / 1000);
      },
      leaseRenewalFailed(n) {
        renewalFailures.inc(n);
      },
    },
  };
}
