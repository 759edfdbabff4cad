// A cron schedule in words (cronstrue), for the dashboard's pages and the CLI's lists alike, so both say
// the same thing about a job.
import cronstrue from "cronstrue";
import { formatSpread } from "./spread.ts";

/** "At 09:00, Monday through Friday (Europe/Berlin)", with ", spread over PT10M" for a spread job;
 *  "Once" for a one-time job; the expression itself when cronstrue cannot read it. */
export function scheduleInWords(
  cron: string | null,
  timezone: string | null,
  runAt: Date | string | null,
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
