// What the materializer should write for one cron job, decided purely (docs/architecture.md).
// Fires that are due are split into those to run and those recorded as skipped, by misfire and
// overlap policy; every decision is a row with a reason, never silence.
import { nextShiftedFires } from "./spread.ts";
import type { MisfirePolicy, OverlapPolicy } from "./types.ts";

export interface CronJobState {
  cron: string;
  timezone: string;
  /** The next fire not yet materialized. */
  nextFireAt: Date;
  misfire: MisfirePolicy;
  overlap: OverlapPolicy;
  catchupWindowMs: number;
  /** The job's spread offset (spread.ts): every fire is its cron instant plus this; nextFireAt is
   *  already shifted. */
  offsetMs?: number;
}

export interface FirePlan {
  fire: Date[];
  skipped: Array<{ at: Date; reason: "misfire" | "misfire_outside_window" | "overlap" }>;
  nextFireAt: Date | null;
  /** After a misfire: fires written ahead before the outage (pending, never attempted) at or before
   *  `before` are superseded by this plan and recorded as skipped with `reason`, so that they do not
   *  run late on top of the policy's catch-up. Null when nothing misfired. */
  supersede: { before: Date; reason: "misfire" | "misfire_outside_window" } | null;
}

/** The first due fire later than this means the scheduler was down (a misfire), not ordinary lag.
 *  Then every overdue fire, however late, is handled by the job's misfire policy. */
export const MISFIRE_GRACE_MS = 60_000;
/** Bound the work of one pass; the rest is picked up by the next pass from the persisted nextFireAt. */
export const MAX_FIRES_PER_PASS = 1000;
/** Jobs with an exclusive overlap policy (skip, buffer_one) are planned at most this far ahead, whatever
 *  the materializer's lookahead: their overlap decision (is one running or waiting?) is only meaningful
 *  near the fire's own time. Planned a minute ahead, every fire would see the previous, still-future
 *  one waiting and be skipped as overlap. */
export const EXCLUSIVE_LOOKAHEAD_MS = 1000;

/** How far ahead this job's fires are planned: the lookahead, capped for exclusive overlap policies. */
function lookaheadFor(overlap: OverlapPolicy, lookaheadMs: number): number {
  return overlap === "allow" ? lookaheadMs : Math.min(lookaheadMs, EXCLUSIVE_LOOKAHEAD_MS);
}

export function planFires(job: CronJobState, now: Date, lookaheadMs: number): FirePlan {
  const horizon = now.getTime() + lookaheadFor(job.overlap, lookaheadMs);
  const due: Date[] = [];
  let next: Date | null = job.nextFireAt;
  // Following fires are computed in growing batches (1, 2, 4 … 64): one nextFires call per fire repeated
  // its set-up for each fire of a job with many fires per pass, while a big first batch would make a
  // daily job compute weeks it does not need (most jobs have one fire per pass).
  let batch: Date[] = [];
  let i = 0;
  let size = 1;
  // Past the cap only for overdue fires inside the grace (at most one a second for a minute): a pass
  // that stops at the cap leaves the next pass an oldest fire beyond the grace, so it still sees the
  // misfire rather than taking the rest for ordinary lag.
  const graceStart = now.getTime() - MISFIRE_GRACE_MS;
  while (
    next &&
    next.getTime() <= horizon &&
    (due.length < MAX_FIRES_PER_PASS || (next.getTime() >= graceStart && next.getTime() <= now.getTime()))
  ) {
    due.push(next);
    if (i >= batch.length) {
      batch = nextShiftedFires(job.cron, job.timezone, next, size, job.offsetMs ?? 0);
      size = Math.min(size * 2, 64);
      i = 0;
    }
    next = batch[i++] ?? null;
  }
  // Misfire: the oldest due fire is later than the grace. Then every overdue fire (up to now) counts as
  // missed, not only those beyond the grace: after 80 s down an every-5-s job has 16 overdue fires, and
  // fire_once means one catch-up, not one plus the dozen that happen to be inside the grace.
  const misfired = due.length > 0 && due[0].getTime() < graceStart;
  const missed = misfired ? due.filter((d) => d.getTime() <= now.getTime()) : [];
  const onTime = misfired ? due.filter((d) => d.getTime() > now.getTime()) : due;
  const plan: FirePlan = { fire: [], skipped: [], nextFireAt: next, supersede: null };

  if (job.misfire === "skip") {
    for (const at of missed) plan.skipped.push({ at, reason: "misfire" });
    if (misfired) plan.supersede = { before: now, reason: "misfire" };
  } else if (job.misfire === "fire_all") {
    const windowStart = now.getTime() - job.catchupWindowMs;
    for (const at of missed) {
      if (at.getTime() >= windowStart) plan.fire.push(at);
      else plan.skipped.push({ at, reason: "misfire_outside_window" });
    }
    if (misfired) plan.supersede = { before: new Date(windowStart - 1), reason: "misfire_outside_window" };
  } else {
    // fire_once: one catch-up trigger (the latest missed fire), the rest recorded as skipped. When the
    // pass stopped at MAX_FIRES_PER_PASS with more overdue fires after it, the catch-up belongs to the
    // pass that reaches the last of them — otherwise a long outage would catch up once per pass.
    const moreMissed = misfired && next !== null && next.getTime() <= now.getTime();
    const catchUp = moreMissed ? undefined : missed[missed.length - 1];
    for (const at of missed) {
      if (at === catchUp) plan.fire.push(at);
      else plan.skipped.push({ at, reason: "misfire" });
    }
    if (misfired) plan.supersede = { before: now, reason: "misfire" };
  }
  plan.fire.push(...onTime);

  // Exclusive overlap policies: one fire per pass. Of the fires already due only the latest is kept (the
  // older ones could not all wait, so they are skipped as overlap). A fire still in the lookahead is
  // left for a later pass: it is decided near its own time, when the materializer can see whether the
  // previous one is still running — not skipped now merely because an earlier fire is planned with it.
  if (job.overlap !== "allow" && plan.fire.length > 1) {
    const due = plan.fire.filter((at) => at.getTime() <= now.getTime());
    const keep = due.length > 0 ? due[due.length - 1] : plan.fire[0];
    for (const at of due.slice(0, -1)) plan.skipped.push({ at, reason: "overlap" });
    const deferred = plan.fire.find((at) => at.getTime() > keep.getTime());
    if (deferred) plan.nextFireAt = deferred;
    plan.fire = [keep];
  }
  plan.skipped.sort((a, b) => a.at.getTime() - b.at.getTime());
  return plan;
}

/** A fire written on time that is still waiting, never attempted, past the grace (what its tenant's
 *  rate quota or caps let run is less than what its cron fires): the job's pending fires are decided by
 *  its misfire policy, as after an outage, so that they stay bounded (docs/schedules.md, "Fires over
 *  the quota"). `stalePendingAt`: the job's latest scheduled fire before `staleBefore(job, now)`, when
 *  that fire is still pending and never attempted (the materializer reads it); null when there is none.
 *  The skip covers fires from `after` on: the scan stays within the fires of the last minutes, and
 *  includes the stale one however long ago it was. */
export interface BacklogSupersede {
  after: Date;
  before: Date;
  reason: "misfire" | "misfire_outside_window";
  /** fire_once: the latest fire at or before `before` stays pending (the one catch-up). */
  keepLatest: boolean;
}

/** Fires older than this, still pending, are a backlog: the grace, or fire_all's catch-up window. */
export function staleBefore(job: Pick<CronJobState, "misfire" | "catchupWindowMs">, now: Date): Date {
  const ms = job.misfire === "fire_all" ? Math.max(job.catchupWindowMs, MISFIRE_GRACE_MS) : MISFIRE_GRACE_MS;
  return new Date(now.getTime() - ms);
}

export function backlogSupersede(
  job: Pick<CronJobState, "misfire" | "overlap" | "catchupWindowMs">,
  now: Date,
  lookaheadMs: number,
  stalePendingAt: Date | null,
): BacklogSupersede | null {
  // Exclusive overlap policies keep at most one fire waiting already.
  if (stalePendingAt === null || job.overlap !== "allow") return null;
  const floor = staleBefore(job, now).getTime() - MISFIRE_GRACE_MS - lookaheadMs;
  const after = new Date(Math.min(floor, stalePendingAt.getTime()));
  if (job.misfire === "fire_all")
    return {
      after,
      before: new Date(now.getTime() - job.catchupWindowMs - 1),
      reason: "misfire_outside_window",
      keepLatest: false,
    };
  return { after, before: now, reason: "misfire", keepLatest: job.misfire === "fire_once" };
}
