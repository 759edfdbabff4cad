// Backfill commands (docs/flow-control.md, "Backfill"): a cron job's fires over a past range, as
// triggers behind the tenant's live work, cancellable as one. Called by the API's routes and the
// dashboard; a refusal is an ApiError and writes nothing.
import { BACKFILL_MAX_FIRES, type FireBudget, firesBetween, spreadOffsetMs } from "@fairway/core";
import { cancelBackfill, createBackfill, getBackfill, getJob, type BackfillInfo } from "@fairway/store";
import type { z } from "zod";
import { announceWork } from "../announce.ts";
import { ApiError, notFound } from "../errors.ts";
import { isLive, notLive } from "../job-input.ts";
import type { backfillBody } from "../schemas.ts";
import type { CommandContext } from "./jobs.ts";

/** How far a refused range is counted, to say how many fires it holds. */
const COUNT_LIMIT = 10_000;
/** Days of the job's calendar one walk over a range may visit (about 1,100 years): what bounds a
 *  sparse cron over a long range, whose fires alone would not. */
const MAX_DAYS_WALKED = 400_000;
/** Fires found, and days visited, between yields to the event loop: a slice costs a few ms, so other
 *  requests run between the slices of a long walk. */
const FIRES_PER_SLICE = 64;
const DAYS_PER_SLICE = 5_000;

/** Thrown by walkFires when the range needs more than MAX_DAYS_WALKED days. */
class RangeTooLong extends Error {}

/** Fires in (after, until], at most `limit`, found a slice at a time with the event loop let go in
 *  between; RangeTooLong once MAX_DAYS_WALKED days are visited. */
async function walkFires(cron: string, timezone: string, after: Date, until: Date, limit: number): Promise<Date[]> {
  const out: Date[] = [];
  let cursor = after;
  let daysLeft = MAX_DAYS_WALKED;
  for (;;) {
    const days = Math.min(DAYS_PER_SLICE, daysLeft);
    const budget: FireBudget = { days };
    const want = Math.min(FIRES_PER_SLICE, limit - out.length);
    const slice = firesBetween(cron, timezone, cursor, until, want, budget);
    out.push(...slice);
    daysLeft -= days - Math.max(0, budget.days);
    if (out.length >= limit) return out;
    if (budget.resumeAfter) {
      if (daysLeft <= 0) throw new RangeTooLong();
      cursor = budget.resumeAfter;
    } else if (slice.length < want) return out;
    else cursor = slice[slice.length - 1];
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

function rangeTooLong(cron: string): ApiError {
  return new ApiError(
    400,
    "backfill_too_long",
    `the range spans more than ${MAX_DAYS_WALKED} days of "${cron}"'s calendar; split it into shorter ranges`,
  );
}

export async function startBackfill(
  { deps, log }: CommandContext,
  tenantId: string,
  jobId: string,
  body: z.infer<typeof backfillBody>,
): Promise<BackfillInfo> {
  const job = await getJob(deps.db, tenantId, jobId);
  if (!job) throw notFound("job");
  if (!isLive(job)) throw notLive(job, "backfilled");
  if (!job.cron || !job.timezone) {
    throw new ApiError(
      400,
      "backfill_not_cron",
      `job ${job.id} is a one-time job; only cron jobs are backfilled (POST /v1/jobs/{id}/run fires a job now)`,
    );
  }
  if (job.status === "paused") {
    throw new ApiError(
      409,
      "job_paused",
      `job ${job.id} is paused; resume it (POST /v1/jobs/{id}/resume), then backfill`,
    );
  }
  const from = new Date(body.from);
  const to = new Date(body.to);
  if (to.getTime() <= from.getTime()) {
    throw new ApiError(400, "validation_error", "to: must be after from (the range is [from, to))");
  }
  const now = deps.now();
  if (to.getTime() > now) {
    throw new ApiError(
      400,
      "backfill_in_future",
      `to: must not be in the future (now is ${new Date(now).toISOString()}); the job's schedule fires what is ahead`,
    );
  }
  // [from, to) is (from − 1 ms, to − 1 ms]: cron instants are whole seconds. A spread job fires at
  // each cron instant plus its offset, so the range is shifted back by it and the fires forward.
  const offset = spreadOffsetMs(job.id, job.spreadMs);
  const after = new Date(from.getTime() - 1 - offset);
  const until = new Date(to.getTime() - 1 - offset);
  let fires: Date[];
  try {
    fires = (await walkFires(job.cron, job.timezone, after, until, BACKFILL_MAX_FIRES + 1)).map(
      (d) => new Date(d.getTime() + offset),
    );
  } catch (err) {
    if (err instanceof RangeTooLong) throw rangeTooLong(job.cron);
    throw err;
  }
  if (fires.length > BACKFILL_MAX_FIRES) {
    let held: string;
    try {
      const n = (await walkFires(job.cron, job.timezone, after, until, COUNT_LIMIT + 1)).length;
      held = n > COUNT_LIMIT ? `more than ${COUNT_LIMIT}` : String(n);
    } catch (err) {
      if (!(err instanceof RangeTooLong)) throw err;
      held = `more than ${BACKFILL_MAX_FIRES}`;
    }
    throw new ApiError(
      400,
      "backfill_too_large",
      `the range holds ${held} fires of "${job.cron}"; a backfill takes at most ${BACKFILL_MAX_FIRES}: split it into smaller ranges`,
    );
  }
  const made = await createBackfill(deps.db, { tenantId, jobId: job.id, from, to, overlap: body.overlap, fires });
  if (!made) {
    // Paused, cancelled or changed between the read and the write.
    const now2 = await getJob(deps.db, tenantId, jobId);
    if (!now2) throw notFound("job");
    if (!isLive(now2)) throw notLive(now2, "backfilled");
    throw new ApiError(
      409,
      "job_paused",
      `job ${job.id} is paused; resume it (POST /v1/jobs/{id}/resume), then backfill`,
    );
  }
  if ((made.counts.pending ?? 0) > 0) {
    announceWork(deps.coordinator, log, { type: job.type, tenantId, dueAt: null }, deps.now());
  }
  log.info("backfill created", { backfillId: made.id, jobId: job.id, fires: made.fires, skipped: made.skipped });
  return made;
}

export async function readBackfill({ deps }: CommandContext, tenantId: string, id: string): Promise<BackfillInfo> {
  const b = await getBackfill(deps.db, tenantId, id);
  if (!b) throw notFound("backfill");
  return b;
}

/** Cancels what of the backfill is not yet claimed; idempotent. */
export async function stopBackfill(
  { deps, log }: CommandContext,
  tenantId: string,
  id: string,
): Promise<BackfillInfo & { cancelledNow: number }> {
  const b = await cancelBackfill(deps.db, tenantId, id);
  if (!b) throw notFound("backfill");
  log.info("backfill cancelled", { backfillId: id, cancelled: b.cancelledNow });
  return b;
}
