/** @jsxImportSource hono/jsx */
// A job's flow control on its page: the spread window and this job's offset within it
// (docs/schedules.md, "Spread"), and what its triggers do while its key is busy (docs/fairness.md,
// "onBusy"). Rows of the job page's schedule list.
import { formatSpread, spreadOffsetMs } from "@fairway/core";
import { fmtMs } from "./format.ts";

interface FlowJob {
  id: string;
  cron: string | null;
  spreadMs: number | null;
  key?: string | null;
  onBusy?: string;
}

const ON_BUSY_WORDS: Record<string, string> = {
  skip: "skip new triggers",
  replace_queued: "keep only the newest waiting trigger",
  cancel_running: "cancel the running trigger for the new one",
};

/** The job's spread offset: what the materializer adds to each cron instant. */
export const offsetOf = (j: FlowJob): number => (j.cron ? spreadOffsetMs(j.id, j.spreadMs) : 0);

export function FlowControlRows({ job }: { job: FlowJob }) {
  const busy = job.key && job.onBusy && job.onBusy !== "queue" ? ON_BUSY_WORDS[job.onBusy] : null;
  return (
    <>
      {job.cron && job.spreadMs ? (
        <>
          <dt>Spread</dt>
          <dd>
            <span class="mono">{formatSpread(job.spreadMs)}</span>: fires {fmtMs(offsetOf(job))} after each cron time
          </dd>
        </>
      ) : null}
      {busy ? (
        <>
          <dt>When key is busy</dt>
          <dd>
            <span class="mono">{job.onBusy}</span>: {busy}
          </dd>
        </>
      ) : null}
    </>
  );
}
