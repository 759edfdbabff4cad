// What the materializer should write for one cron job, decided purely (DESIGN.md §6).
// Fires that are due are split into those to run and those recorded as skipped, by misfire and
// overlap policy; every decision is a row with a reason, never silence.
import { nextFires } from "./cron.ts";
import type { MisfirePolicy, OverlapPolicy } from "./types.ts";

export interface CronJobState {
  cron: string;
  timezone: string;
  /** The next fire not yet materialized. */
  nextFireAt: Date;
  misfire: MisfirePolicy;
  overlap: OverlapPolicy;
  catchupWindowMs: number;
}

export interface FirePlan {
  fire: Date[];
  skipped: Array<{ at: Date; reason: "misfire" | "misfire_outside_window" | "overlap" }>;
  nextFireAt: Date | null;
}

/** A fire later than this is a misfire (the executor was down), not ordinary lag. */
export const MISFIRE_GRACE_MS = 60_000;
/** Bound the work of one pass; the rest is picked up by the next pass from the persisted nextFireAt. */
export const MAX_FIRES_PER_PASS = 1000;

export function planFires(job: CronJobState, now: Date, lookaheadMs: number): FirePlan {
  const horizon = now.getTime() + lookaheadMs;
  const due: Date[] = [];
  let next: Date | null = job.nextFireAt;
  while (next && next.getTime() <= horizon && due.length < MAX_FIRES_PER_PASS) {
    due.push(next);
    next = nextFires(job.cron, job.timezone, next, 1)[0] ?? null;
  }
  const missedBefore = now.getTime() - MISFIRE_GRACE_MS;
  const missed = due.filter((d) => d.getTime() < missedBefore);
  const onTime = due.filter((d) => d.getTime() >= missedBefore);
  const plan: FirePlan = { fire: [], skipped: [], nextFireAt: next };

  if (job.misfire === "skip") {
    for (const at of missed) plan.skipped.push({ at, reason: "misfire" });
  } else if (job.misfire === "fire_all") {
    const windowStart = now.getTime() - job.catchupWindowMs;
    for (const at of missed) {
      if (at.getTime() >= windowStart) plan.fire.push(at);
      else plan.skipped.push({ at, reason: "misfire_outside_window" });
    }
  } else {
    // fire_once: one catch-up trigger (the latest missed fire), the rest recorded as skipped.
    for (const at of missed.slice(0, -1)) plan.skipped.push({ at, reason: "misfire" });
    if (missed.length > 0) plan.fire.push(missed[missed.length - 1]);
  }
  plan.fire.push(...onTime);

  // With an exclusive overlap policy, fires produced in one pass cannot all wait: keep the latest.
  if (job.overlap !== "allow" && plan.fire.length > 1) {
    for (const at of plan.fire.slice(0, -1)) plan.skipped.push({ at, reason: "overlap" });
    plan.fire = plan.fire.slice(-1);
  }
  plan.skipped.sort((a, b) => a.at.getTime() - b.at.getTime());
  return plan;
}
