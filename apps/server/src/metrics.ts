// The Node server's own metrics (prom-client): what only the process sees — attempt durations, fire
// lag, claim time, outcomes, what its settles and reaper wrote, renewal failures — as histograms and
// counters of this process. GET /metrics appends them to the database-derived gauges (packages/api
// routes/metrics.ts). Labels: pool, outcome and status only.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Executor, ExecutorObserver } from "@fairway/executor";

/** Seconds: from a millisecond no-op to a webhook near its timeout. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds late: on the second, a poll late, a backlog, an outage. */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];

export interface ServerMetrics {
  registry: Registry;
  observer: ExecutorObserver;
  /** Read the executor's running totals (claimed, settled, released, loop errors) and its health
   *  (stalls, last claim and settle) at each scrape. */
  bindExecutor(executor: Pick<Executor, "stats" | "health">): void;
}

export function createServerMetrics(): ServerMetrics {
  const registry = new Registry();
  // prom-client's names already start process_ or nodejs_: fairway_ alone makes fairway_process_cpu_…
  collectDefaultMetrics({ register: registry, prefix: "fairway_" });
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
    help: "Triggers this process's settles made dead (its attempts and the leases it reaped), by pool.",
    labelNames: ["pool"],
    registers: [registry],
  });
  const reaped = new Counter({
    name: "fairway_reaped_total",
    help: "Running triggers whose lease this process reaped (owner dead, lost or stalled), by pool and the status written.",
    labelNames: ["pool", "status"],
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
  // The executor's own running totals, read at scrape time.
  let stats: Executor["stats"] | null = null;
  let health: (() => ReturnType<Executor["health"]>) | null = null;
  new Counter({
    name: "fairway_executor_loop_stalls_total",
    help: "Times a loop of this process's executor made no progress past FAIRWAY_LOOP_STALL_MS and was restarted, by loop.",
    labelNames: ["loop"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [loop, n] of health?.().stalls ?? []) this.inc({ loop }, n);
    },
  });
  const age = (name: string, help: string, pick: (h: ReturnType<Executor["health"]>) => number | null) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const h = health?.();
        const at = h ? (pick(h) ?? h.startedAt) : null;
        this.set(at === null ? 0 : (Date.now() - at) / 1000);
      },
    });
  age(
    "fairway_executor_last_claim_age_seconds",
    "Seconds since this process's claim loop last ended a pass without error (since the start before the first).",
    (h) => h.lastClaimAt,
  );
  age(
    "fairway_executor_last_settle_age_seconds",
    "Seconds since a settle of this process last landed (since the start before the first).",
    (h) => h.lastSettleAt,
  );
  const total = (name: string, help: string, pick: (s: Executor["stats"]) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        if (stats) this.inc(pick(stats));
      },
    });
  total("fairway_executor_claimed_total", "Triggers this process claimed.", (s) => s.claimed);
  total("fairway_executor_settled_total", "Settlements this process wrote for its own attempts.", (s) => s.settled);
  total(
    "fairway_executor_released_total",
    "Claimed triggers this process gave back unrun when it stopped.",
    (s) => s.released,
  );
  total("fairway_executor_loop_errors_total", "Failed passes of this process's claim loop.", (s) => s.loopErrors);
  return {
    registry,
    bindExecutor(executor) {
      stats = executor.stats;
      health = () => executor.health();
    },
    observer: {
      notificationFinished(n) {
        notifications.inc({ event: n.event, channel_type: n.channelType, status: n.status });
      },
      attemptFinished(a) {
        duration.observe({ pool: a.pool, outcome: a.outcome }, a.durationMs / 1000);
        attempts.inc({ pool: a.pool, outcome: a.outcome });
        if (a.fireLagMs !== null) fireLag.observe({ pool: a.pool }, Math.max(0, a.fireLagMs) / 1000);
      },
      // Counted on what the fenced write changed: an attempt whose lease was reaped first made nothing dead.
      settled(rows, by) {
        for (const r of rows) {
          if (r.status === "dead") dead.inc({ pool: r.type });
          if (by === "reaper") reaped.inc({ pool: r.type, status: r.status });
        }
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
