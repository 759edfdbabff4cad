// A job's schedule in words (core's scheduleInWords, shared with the CLI) and its next fires, computed
// by the scheduler's own cron code in the job's time zone, so the page shows exactly what the
// materializer will fire.
import { nextFires } from "@fairway/core";

export { scheduleInWords } from "@fairway/core";

export function upcomingFires(cron: string | null, timezone: string | null, from: Date, count = 5): Date[] {
  if (!cron) return [];
  try {
    return nextFires(cron, timezone ?? "UTC", from, count);
  } catch {
    return [];
  }
}
