/** @jsxImportSource hono/jsx */
// A job's flow control on its page (docs/flow-control.md): how many creates a debounced job folded,
// and a cron job's backfills with their counts and a cancel (read here, so the job page only places
// them; the cancel goes through the command layer like every dashboard action); the spread window and
// this job's offset within it (docs/schedules.md, "Spread"), and what its triggers do while its key is
// busy (docs/fairness.md, "onBusy"), as rows of the job page's schedule list.
import { formatSpread, spreadOffsetMs } from "@fairway/core";
import { Hono, type Context } from "hono";
import { listBackfills, type BackfillInfo, type DebounceState, type JobRow } from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { fmtMs } from "./format.ts";
import { When } from "./time.tsx";
import { PostForm } from "./layout.tsx";

/** Backfills shown on a job's page, newest first (the API lists them all). */
const SHOWN = 10;

export async function FlowControl(props: { c: Context<DashEnv>; job: JobRow; backfillError?: BackfillForm }) {
  const { c, job } = props;
  const debounce = job.debounce as DebounceState | null;
  const backfills = job.cron ? await listBackfills(c.var.dash.db, c.var.tenantId, job.id, null, SHOWN) : [];
  const canBackfill = job.cron !== null && job.status === "active";
  if (!debounce && backfills.length === 0 && !canBackfill) return null;
  return (
    <>
      {canBackfill && <BackfillStart c={c} jobId={job.id} form={props.backfillError} />}
      {debounce && (
        <section class="card" aria-labelledby="debounce-h">
          <h2 id="debounce-h">Debounce</h2>
          <dl class="kv">
            <dt>Key</dt>
            <dd class="mono">{debounce.key}</dd>
            <dt>Folded</dt>
            <dd>
              {debounce.folded} later {debounce.folded === 1 ? "create" : "creates"} folded into this job
            </dd>
            <dt>Quiet period</dt>
            <dd>
              {fmtMs(debounce.periodMs)}
              {debounce.maxWaitMs !== null && `, at most ${fmtMs(debounce.maxWaitMs)} after the first create`}
            </dd>
          </dl>
        </section>
      )}
      {backfills.length > 0 && <Backfills c={c} jobId={job.id} rows={backfills} />}
    </>
  );
}

const countsText = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `${n} ${s}`)
    .join(", ") || "none written";

function Backfills(props: { c: Context<DashEnv>; jobId: string; rows: BackfillInfo[] }) {
  const { c } = props;
  const jobUrl = `${c.var.base}/jobs/${encodeURIComponent(props.jobId)}`;
  return (
    <>
      <h2>Backfills</h2>
      <div class="table-wrap">
        <table class="stack">
          <caption class="sr">Backfills, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Backfill</th>
              <th scope="col">Range</th>
              <th scope="col" class="num">
                Fires
              </th>
              <th scope="col">Triggers</th>
              <th scope="col">Cancel</th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((b) => (
              <tr>
                <td data-label="Backfill" class="mono">
                  {b.id}
                </td>
                <td data-label="Range">
                  <When d={b.fromAt} /> – <When d={b.toAt} />
                </td>
                <td data-label="Fires" class="num">
                  {b.fires}
                  {b.skipped > 0 && ` (${b.skipped} skipped)`}
                </td>
                <td data-label="Triggers">{countsText(b.counts)}</td>
                <td data-label="Cancel">
                  {(b.counts.pending ?? 0) > 0 ? (
                    <PostForm
                      action={`${jobUrl}/backfills/${encodeURIComponent(b.id)}/cancel`}
                      csrf={c.var.csrf}
                      class="inline"
                      label={`Cancel backfill ${b.id}`}
                    >
                      <button type="submit" class="secondary">
                        Cancel
                      </button>
                    </PostForm>
                  ) : (
                    "—"
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** The backfill form as typed, and the API's refusal of it. */
export interface BackfillForm {
  from: string;
  to: string;
  overlap: string;
  error: string;
}

/** Runs the job's past fires in [from, to) behind the tenant's live work (POST /v1/jobs/{id}/backfill). */
function BackfillStart(props: { c: Context<DashEnv>; jobId: string; form?: BackfillForm }) {
  const { c, form } = props;
  const jobUrl = `${c.var.base}/jobs/${encodeURIComponent(props.jobId)}`;
  const invalid = form ? "true" : undefined;
  return (
    <section class="card" aria-labelledby="backfill-h">
      <h2 id="backfill-h">Backfill</h2>
      <p class="muted">
        Run this job's fires in a past range, at most 1,000, behind the tenant's live work; cancel them below.
      </p>
      {form && (
        <p class="flash err" role="alert" id="backfill-error">
          {form.error}
        </p>
      )}
      <PostForm action={`${jobUrl}/backfill`} csrf={c.var.csrf} label="Backfill">
        <div class="grid tight">
          <div class="field">
            <label for="bf-from">From (inclusive)</label>
            <input
              id="bf-from"
              name="from"
              class="mono"
              value={form?.from ?? ""}
              required
              aria-invalid={invalid}
              aria-describedby="bf-hint"
            />
          </div>
          <div class="field">
            <label for="bf-to">To (exclusive)</label>
            <input
              id="bf-to"
              name="to"
              class="mono"
              value={form?.to ?? ""}
              required
              aria-invalid={invalid}
              aria-describedby="bf-hint"
            />
          </div>
          <div class="field">
            <label for="bf-overlap">Fires it already has</label>
            <select id="bf-overlap" name="overlap">
              <option value="skip" selected={form?.overlap !== "allow"}>
                skip: leave them out
              </option>
              <option value="allow" selected={form?.overlap === "allow"}>
                allow: run them again
              </option>
            </select>
          </div>
        </div>
        <div class="field">
          <p class="hint" id="bf-hint">
            ISO-8601 instants with their zone, e.g. 2026-01-01T00:00:00Z; to is not in the future.
          </p>
        </div>
        <button type="submit">Start backfill</button>
      </PostForm>
    </section>
  );
}

export const flowControlPages = new Hono<DashEnv>();

flowControlPages.post("/jobs/:id/backfills/:backfill/cancel", async (c) => {
  const b = await c.var.dash.commands.cancelBackfill(c.var.tenantId, c.req.param("backfill"));
  c.var.dash.log.info("backfill cancelled", { tenantId: c.var.tenantId, backfillId: b.id, via: "dashboard" });
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(c.req.param("id"))}?done=backfill_cancelled`, 303);
});

interface FlowJob {
  id: string;
  cron: string | null;
  spreadMs: number | null;
  key?: string | null;
  onBusy?: string;
}

const ON_BUSY_WORDS: Record<string, string> = {
  queue: "wait for a free slot",
  skip: "skip new triggers",
  replace_queued: "keep only the newest waiting trigger",
  cancel_running: "cancel the running trigger for the new one",
};

/** The job's spread offset: what the materializer adds to each cron instant. */
export const offsetOf = (j: FlowJob): number => (j.cron ? spreadOffsetMs(j.id, j.spreadMs) : 0);

export function FlowControlRows({ job }: { job: FlowJob }) {
  const busy = job.key && job.onBusy ? ON_BUSY_WORDS[job.onBusy] : null;
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
