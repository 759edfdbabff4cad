// A cron schedule in words (cronstrue), for the dashboard's pages and the CLI's lists alike, so both say
// the same thing about a job.
import cronstrue from "cronstrue";

/** "At 09:00, Monday through Friday (Europe/Berlin)"; "Once" for a one-time job; the expression itself
 *  when cronstrue cannot read it. */
export function scheduleInWords(cron: string | null, timezone: string | null, runAt: Date | string | null): string {
  if (!cron) return runAt ? "Once" : "—";
  try {
    const words = cronstrue.toString(cron, { use24HourTimeFormat: true, verbose: false });
    return `${words} (${timezone ?? "UTC"})`;
  } catch {
    return cron;
  }
}
