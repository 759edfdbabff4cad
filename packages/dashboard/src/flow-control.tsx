/** @jsxImportSource hono/jsx */
// A job's flow control on its page (docs/schedules.md, "Spread"): the spread window and this job's
// offset within it. Rows of the job page's schedule list.
import { formatSpread, spreadOffsetMs } from "@fairway/core";
import { fmtMs } from "./format.ts";

interface FlowJob {
  id: string;
  cron: string | null;
  spreadMs: number | null;
}

/** The job's spread offset: what the materializer adds to each cron instant. */
export const offsetOf = (j: FlowJob): number => (j.cron ? spreadOffsetMs(j.id, j.spreadMs) : 0);

export function FlowControlRows({ job }: { job: FlowJob }) {
  if (!job.cron || !job.spreadMs) return null;
  return (
    <>
      <dt>Spread</dt>
      <dd>
        <span class="mono">{formatSpread(job.spreadMs)}</span>: fires {fmtMs(offsetOf(job))} after each cron time
      </dd>
    </>
  );
}
