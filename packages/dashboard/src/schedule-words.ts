// A job's schedule in words (cronstrue) and its next fires, computed by the scheduler's own cron code
// in the job's time zone, so the page shows exactly what the materializer will fire.
import cronstrue from "cronstrue";
import { nextFires } from "@fairway/core";

export function scheduleInWords(cron: string | null, timezone: string | null, runAt: Date | null): string {
  if (!cron) return runAt ? "Once" : "—";
  try {
    const words = cronstrue.toString(cron, { use24HourTimeFormat: true, verbose: false });
    return `${words} (${timezone ?? "UTC"})`;
  } catch {
    return cron;
  }
}

export function upcomingFires(cron: string | null, timezone: string | null, from: Date, count = 5): Date[] {
  if (!cron) return [];
  try {
    return nextFires(cron, timezone ?? "UTC", from, count);
  } catch {
    return [];
  }
}
