// A job's schedule in words (core's scheduleInWords, shared with the CLI) and its next fires, computed
// by the scheduler's own cron code in the job's time zone, so the page shows exactly what the
// materializer will fire.
import { nextShiftedFires } from "@fairway/core";

export { scheduleInWords } from "@fairway/core";

/** `offsetMs`: a spread job's offset (spreadOffsetMs), added to every fire as the materializer does. */
export function upcomingFires(
  cron: string | null,
  timezone: string | null,
  from: Date,
  count = 5,
  offsetMs = 0,
): Date[] {
  if (!cron) return [];
  try {
    return nextShiftedFires(cron, timezone ?? "UTC", from, count, offsetMs);
  } catch {
    return [];
  }
}
