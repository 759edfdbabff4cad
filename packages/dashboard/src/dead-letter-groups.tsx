/** @jsxImportSource hono/jsx */
// Dead letters grouped by job, the job with the newest first, each with its count, its latest error and
// "Replay all": one row per failing job however many letters it has, so a burst of one job's failures
// cannot push another's newest out of sight. The replay goes through the command layer
// (replayJobDeadLetters: at most REPLAY_BATCH a call, the flash says how many remain).
import type { Context } from "hono";
import { COUNT_CAP, REPLAY_BATCH, type DeadLetterGroup } from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { DashboardError } from "./errors.ts";
import { fmtCount } from "./format.ts";
import { When } from "./time.tsx";
import { PostForm } from "./layout.tsx";

/** The groups table. `tenantBase(tenantId)` is the tenant view's base (the operator's /t/<id>, or the
 *  portal's own); `showTenant` adds the tenant column (operator, every tenant). */
export function DeadLetterGroups(props: {
  groups: DeadLetterGroup[];
  capped: boolean;
  csrf: string;
  tenantBase: (tenantId: string) => string;
  showTenant?: boolean;
}) {
  if (props.groups.length === 0) return <p class="card empty">No dead letters.</p>;
  return (
    <div class="table-wrap">
      <table class="stack">
        <caption class="sr">Dead letters by job, newest first</caption>
        <thead>
          <tr>
            {props.showTenant && <th scope="col">Tenant</th>}
            <th scope="col">Job</th>
            <th scope="col" class="num">
              Dead letters
            </th>
            <th scope="col">Latest</th>
            <th scope="col">Latest error</th>
            <th scope="col">
              <span class="sr">Action</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.groups.map((g) => {
            const base = props.tenantBase(g.tenantId);
            const count = props.capped ? fmtCount(g.count, COUNT_CAP) : g.count.toLocaleString("en");
            return (
              <tr>
                {props.showTenant && <td data-label="Tenant">{g.tenantId}</td>}
                <td data-label="Job">
                  <a href={`${base}/jobs/${encodeURIComponent(g.jobId)}`}>{g.jobName}</a>
                  <br />
                  <span class="mono">{g.type}</span>
                </td>
                <td data-label="Dead letters" class="num">
                  {count}
                </td>
                <td data-label="Latest">
                  <a class="mono" href={`${base}/triggers/${encodeURIComponent(g.latestId)}`}>
                    <When d={g.latestAt} />
                  </a>
                </td>
                <td data-label="Latest error" class="mono">
                  {errorText(g)}
                </td>
                <td data-label="Action">
                  <PostForm
                    action={`${base}/dead-letters/replay`}
                    csrf={props.csrf}
                    class="inline"
                    label={`Replay all of ${g.jobName}`}
                  >
                    <input type="hidden" name="jobId" value={g.jobId} />
                    <button type="submit" class="secondary" aria-label={`Replay all dead letters of ${g.jobName}`}>
                      Replay all{g.count > REPLAY_BATCH ? ` (${REPLAY_BATCH} at a time)` : ""}
                    </button>
                  </PostForm>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function errorText(g: DeadLetterGroup): string {
  // An HTTP failure's error is often just "HTTP 500": each part once.
  const parts = new Set([g.httpStatus != null ? `HTTP ${g.httpStatus}` : null, g.error, g.reason].filter(Boolean));
  const text = [...parts].join(" · ") || "—";
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

/** POST <tenant base>/dead-letters/replay {jobId}: back to the dead letters with how it went. */
export async function replayJobForm(c: Context<DashEnv>) {
  const form = await c.req.parseBody();
  const jobId = typeof form.jobId === "string" ? form.jobId.trim() : "";
  if (!jobId || jobId.length > 100) throw new DashboardError(400, "validation_error", "jobId: name the job to replay");
  const r = await c.var.dash.commands.replayJobDeadLetters(c.var.tenantId, jobId);
  const q = new URLSearchParams({ replayed: String(r.replayed), remaining: String(r.remaining) });
  return c.redirect(`${c.var.base}/dead-letters?${q}`, 303);
}

/** The flash after a replay-all (from the redirect's query). */
export function replayFlash(c: Context): { kind: "ok"; text: string } | null {
  const replayed = Number(c.req.query("replayed"));
  const remaining = Number(c.req.query("remaining"));
  if (!Number.isInteger(replayed) || !Number.isInteger(remaining) || c.req.query("replayed") === undefined) return null;
  const sent = `Replayed ${replayed} dead letter${replayed === 1 ? "" : "s"}: pending again, same webhook-ids.`;
  return {
    kind: "ok",
    text: remaining > 0 ? `${sent} ${remaining} remain; press Replay all again for the next batch.` : sent,
  };
}
