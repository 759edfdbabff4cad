// A job's schedule in words (cronstrue) and its next fires, computed by the scheduler's own cron code
// in the job's time zone, so the page shows exactly what the materializer will fire.
import cronstrue from "cronstrue";
import { formatSpread, nextShiftedFires } from "@fairway/core";

export function scheduleInWords(
  cron: string | null,
  timezone: string | null,
  runAt: Date | null,
  spreadMs: number | null = null,
): string {
  if (!cron) return runAt ? "Once" : "—";
  try {
    const words = cronstrue.toString(cron, { use24HourTimeFormat: true, verbose: false });
    const spread = spreadMs ? `, spread over ${formatSpread(spreadMs)}` : "";
    return `${words} (${timezone ?? "UTC"})${spread}`;
  } catch {
    return cron;
  }
}

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
