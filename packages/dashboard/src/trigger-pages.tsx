/** @jsxImportSource hono/jsx */
// A tenant's triggers: one trigger with each attempt's request and response, replay, and the dead
// letters.
import { Hono, type Context } from "hono";
import { triggerTraceParent } from "@fairway/core";
import {
  deadLetterGroups,
  getJob,
  getTrigger,
  listDeadLetterSummaries,
  type AttemptDetail,
  type AttemptRow,
  type TriggerRow,
} from "@fairway/store";
import { DeadLetterGroups, replayFlash, replayJobForm } from "./dead-letter-groups.tsx";
import type { DashEnv } from "./deps.ts";
import { DashboardError, notFound } from "./errors.ts";
import { fmtMs } from "./format.ts";
import { When } from "./time.tsx";
import { PAGE_SIZE } from "./forms.ts";
import { Pager, PostForm, StatusChip } from "./layout.tsx";
import { headerNames, noRequestText, page, shownHeaderValue, targetText, triggeredBy } from "./tenant-shell.tsx";

export const triggerPages = new Hono<DashEnv>();

triggerPages.get("/triggers/:id", async (c) => {
  const d = c.var.dash;
  const t = await getTrigger(d.db, c.var.tenantId, c.req.param("id"));
  if (!t) throw notFound("trigger");
  const job = await getJob(d.db, c.var.tenantId, t.jobId);
  const base = c.var.base;
  const triggerUrl = `${base}/triggers/${encodeURIComponent(t.id)}`;
  const open = t.status === "pending" || t.status === "running";
  // A target with its own body sends that (secrets as placeholders here); otherwise the payload goes in
  // Fairway's delivery envelope.
  const ownBody = (job?.target as { body?: unknown } | null)?.body;
  return page(
    c,
    `Trigger ${t.id}`,
    "/jobs",
    <>
      <h1>
        Trigger <span class="mono">{t.id}</span>
      </h1>
      <p class="sub">
        Job <a href={`${base}/jobs/${encodeURIComponent(t.jobId)}`}>{job?.name ?? t.jobId}</a> · the webhook-id of every
        delivery of this trigger is its id.
      </p>
      <div data-live={open ? `${triggerUrl}/live` : undefined} data-every="1500">
        <TriggerBody c={c} t={t} handler={handlerOf(job)} traceId={traceIdOf(c, t.id, job)} />
      </div>
      {!open && job && (
        <section class="card" aria-labelledby="rerun-h">
          <h2 id="rerun-h">Re-run</h2>
          <p class="muted">
            A new trigger of this job, due now, sending what is below for that run alone; the job keeps its own.
          </p>
          <PostForm action={`${triggerUrl}/rerun`} csrf={c.var.csrf} label="Re-run">
            <input type="hidden" name="field" value={ownBody === undefined ? "payload" : "body"} />
            <label for="rerun-value">
              {ownBody === undefined ? "Payload (JSON)" : "Body (JSON, or text in quotes)"}
            </label>
            <textarea id="rerun-value" name="value" rows={6} class="mono">
              {JSON.stringify(ownBody === undefined ? (job.payload ?? null) : ownBody, null, 2)}
            </textarea>
            <button type="submit">Re-run</button>
          </PostForm>
        </section>
      )}
      <section class="card" aria-labelledby="req-h">
        <h2 id="req-h">The job's target now</h2>
        <dl class="kv">
          <dt>Target</dt>
          <dd class="mono">{targetText(job?.target, job?.type)}</dd>
          <dt>Header names</dt>
          <dd class="mono">{headerNames(job?.target)}</dd>
        </dl>
        {ownBody === undefined ? (
          <>
            <h3>Payload</h3>
            <pre>{JSON.stringify(job?.payload ?? null, null, 2)}</pre>
          </>
        ) : (
          <>
            <h3>Body</h3>
            <pre>{typeof ownBody === "string" ? ownBody : JSON.stringify(ownBody, null, 2)}</pre>
          </>
        )}
        <p class="muted">
          What the next attempt will send; each attempt above shows what it sent. Header values are not shown here.
        </p>
      </section>
    </>,
  );
});

triggerPages.get("/triggers/:id/live", async (c) => {
  const t = await getTrigger(c.var.dash.db, c.var.tenantId, c.req.param("id"));
  if (!t) throw notFound("trigger");
  const job = await getJob(c.var.dash.db, c.var.tenantId, t.jobId);
  return c.html(<TriggerBody c={c} t={t} handler={handlerOf(job)} traceId={traceIdOf(c, t.id, job)} />);
});

/** The trace the trigger's attempts are spans of (core triggerTraceParent): shown when this server
 *  traces, or when the job was created with a traceparent (its deliveries carry that trace). */
function traceIdOf(
  c: Context<DashEnv>,
  triggerId: string,
  job: { traceparent: string | null; cron: string | null } | null,
): string | null {
  const kept = job?.traceparent ? { parent: job.traceparent, join: job.cron === null } : null;
  if (!c.var.dash.traced && !kept?.join) return null;
  return triggerTraceParent(triggerId, kept).traceId;
}

function TraceId(props: { c: Context<DashEnv>; traceId: string }) {
  const template = props.c.var.dash.traceUrlTemplate;
  if (!template) return <span class="mono">{props.traceId}</span>;
  return (
    <a class="mono" href={template.replaceAll("{traceId}", props.traceId)} rel="noreferrer">
      {props.traceId}
    </a>
  );
}

/** A job without a target is run by a worker's handler for its type. */
function handlerOf(job: { target: unknown; type: string } | null): string | null {
  return job && !job.target ? job.type : null;
}

function TriggerBody(props: {
  c: Context<DashEnv>;
  t: TriggerRow & { attempts: AttemptRow[] };
  handler: string | null;
  traceId: string | null;
}) {
  const { c, t } = props;
  return (
    <>
      <section class="card" aria-labelledby="trg-h">
        <h2 id="trg-h">
          Status <StatusChip status={t.status} />
        </h2>
        <dl class="kv">
          <dt>Triggered by</dt>
          <dd>{triggeredBy(t)}</dd>
          <dt>Scheduled for</dt>
          <dd>
            <When d={t.scheduledFor} />
          </dd>
          <dt>Attempts</dt>
          <dd>
            {t.attemptCount} of {t.maxAttempts}
          </dd>
          {t.status === "pending" && (
            <>
              <dt>Next attempt</dt>
              <dd>
                <When d={t.nextAttemptAt} />
              </dd>
            </>
          )}
          <dt>Reason</dt>
          <dd class="mono">{t.reason ?? "—"}</dd>
          <dt>Finished</dt>
          <dd>
            <When d={t.finishedAt} />
          </dd>
          {props.traceId && (
            <>
              <dt>Trace</dt>
              <dd>
                <TraceId c={c} traceId={props.traceId} />
              </dd>
            </>
          )}
        </dl>
        {t.status === "dead" && (
          <div class="actions">
            <PostForm
              action={`${c.var.base}/triggers/${encodeURIComponent(t.id)}/replay`}
              csrf={c.var.csrf}
              class="inline"
              label="Replay"
            >
              <button type="submit">Replay</button>
            </PostForm>
          </div>
        )}
        {(t.status === "pending" || t.status === "running") && (
          <div class="actions">
            <PostForm
              action={`${c.var.base}/triggers/${encodeURIComponent(t.id)}/cancel`}
              csrf={c.var.csrf}
              class="inline"
              label="Cancel trigger"
            >
              <button type="submit" class="secondary">
                Cancel
              </button>
            </PostForm>
          </div>
        )}
      </section>
      <h2>Attempts</h2>
      {t.attempts.length === 0 ? (
        <p class="card empty">No finished attempt yet.</p>
      ) : (
        t.attempts.map((a) => <AttemptCard a={a} handler={props.handler} />)
      )}
    </>
  );
}

/** One attempt: how it ended, the request as sent (secrets as their placeholders) and the response. */
function AttemptCard(props: { a: AttemptRow; handler: string | null }) {
  const a = props.a;
  const detail = a.detail as AttemptDetail | null;
  const req = detail?.request ?? null;
  const id = `att-${a.attempt}`;
  return (
    <section class="card attempt" aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>
        Attempt {a.attempt} <StatusChip status={a.outcome} />
      </h3>
      <dl class="kv">
        <dt>Started</dt>
        <dd>
          <When d={a.startedAt} />
        </dd>
        <dt>Duration</dt>
        <dd>{fmtMs(a.durationMs)}</dd>
        <dt>HTTP status</dt>
        <dd>{a.httpStatus ?? "—"}</dd>
        {a.error && (
          <>
            <dt>Error</dt>
            <dd class="mono">{a.error}</dd>
          </>
        )}
      </dl>
      <div class="exchange">
        <section aria-labelledby={`${id}-req`}>
          <h4 id={`${id}-req`}>Request</h4>
          {req ? (
            <>
              <p class="mono line">
                <strong>{req.method}</strong> {req.url}
              </p>
              <h5>Headers</h5>
              <Headers headers={req.headers} />
              <h5>Body</h5>
              <pre class="request-body">{req.body ?? "(no body)"}</pre>
              {req.truncated && <p class="muted">Body cut at the length an attempt keeps.</p>}
            </>
          ) : (
            <p class="muted">{noRequestText(props.handler, a.outcome === "success" || a.httpStatus !== null)}</p>
          )}
        </section>
        <section aria-labelledby={`${id}-res`}>
          <h4 id={`${id}-res`}>Response</h4>
          {a.httpStatus === null ? (
            <p class="muted">No response.</p>
          ) : (
            <>
              <p class="mono line">
                <strong>{a.httpStatus}</strong>
              </p>
              <h5>Headers</h5>
              <Headers headers={detail?.responseHeaders ?? {}} />
              <h5>Body</h5>
              <pre class="response">{a.responseBody ?? ""}</pre>
              {detail?.responseTruncated && <p class="muted">Body cut at the pool's response limit.</p>}
            </>
          )}
        </section>
      </div>
      {detail?.logs && (
        <section aria-labelledby={`${id}-logs`}>
          <h4 id={`${id}-logs`}>Handler logs</h4>
          <pre class="handler-logs">{detail.logs.lines.join("\n")}</pre>
          {detail.logs.truncated && <p class="muted">Logs cut at the 64 KiB an attempt keeps.</p>}
        </section>
      )}
    </section>
  );
}

function Headers(props: { headers: Record<string, string> }) {
  const names = Object.keys(props.headers).sort();
  if (names.length === 0) return <p class="muted">No headers.</p>;
  return (
    <dl class="kv headers mono">
      {names.map((n) => (
        <>
          <dt>{n}</dt>
          <dd>{shownHeaderValue(n, props.headers[n])}</dd>
        </>
      ))}
    </dl>
  );
}

triggerPages.post("/triggers/:id/replay", async (c) => {
  const id = c.req.param("id");
  await c.var.dash.commands.replayTrigger(c.var.tenantId, id);
  return c.redirect(`${c.var.base}/triggers/${encodeURIComponent(id)}?done=replayed`, 303);
});

triggerPages.post("/dead-letters/replay", replayJobForm);

triggerPages.post("/triggers/:id/cancel", async (c) => {
  const id = c.req.param("id");
  await c.var.dash.commands.cancelTrigger(c.var.tenantId, id);
  return c.redirect(`${c.var.base}/triggers/${encodeURIComponent(id)}?done=trigger_cancelled`, 303);
});

/** The form's JSON as the override of its field (payload, or a request target's body). */
triggerPages.post("/triggers/:id/rerun", async (c) => {
  const form = await c.req.parseBody();
  const field = form.field === "body" ? "body" : "payload";
  let value: unknown;
  try {
    value = JSON.parse(String(form.value ?? ""));
  } catch {
    throw new DashboardError(400, "invalid_json", `${field}: not valid JSON; write JSON, e.g. {"orderId": 42}`);
  }
  const t = await c.var.dash.commands.rerunTrigger(c.var.tenantId, c.req.param("id"), { [field]: value });
  return c.redirect(`${c.var.base}/triggers/${encodeURIComponent(t.id)}?done=rerun`, 303);
});

triggerPages.get("/dead-letters", async (c) => {
  const d = c.var.dash;
  const after = c.req.query("after")?.slice(0, 100) ?? null;
  const base = c.var.base;
  const [grouped, rows] = await Promise.all([
    deadLetterGroups(d.db, { tenantId: c.var.tenantId, limit: PAGE_SIZE }),
    listDeadLetterSummaries(d.db, {
      tenantId: c.var.tenantId,
      after: after ? { tenantId: c.var.tenantId, triggerId: after } : null,
      limit: PAGE_SIZE + 1,
    }),
  ]);
  const list = rows.slice(0, PAGE_SIZE);
  const next =
    rows.length > PAGE_SIZE ? `${base}/dead-letters?after=${encodeURIComponent(list[list.length - 1].id)}` : null;
  return page(
    c,
    "Dead letters",
    "/dead-letters",
    <>
      <h1>Dead letters</h1>
      <p class="sub">
        Triggers that used up their attempts or were refused for good. Replay sends the same trigger again, with the
        same webhook-id.
      </p>
      <h2>By job</h2>
      <DeadLetterGroups groups={grouped.groups} capped={grouped.capped} csrf={c.var.csrf} tenantBase={() => base} />
      <h2>Every dead letter, newest first</h2>
      {list.length === 0 ? (
        <p class="card empty">No dead letters.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">Dead letters</caption>
            <thead>
              <tr>
                <th scope="col">Trigger</th>
                <th scope="col">Job</th>
                <th scope="col">Reason</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Finished</th>
                <th scope="col">
                  <span class="sr">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((r) => (
                <tr>
                  <td data-label="Trigger">
                    <a class="mono" href={`${base}/triggers/${encodeURIComponent(r.id)}`}>
                      {r.id}
                    </a>
                  </td>
                  <td data-label="Job">
                    <a href={`${base}/jobs/${encodeURIComponent(r.jobId)}`}>{r.jobName}</a>
                  </td>
                  <td data-label="Reason" class="mono">
                    {r.reason ?? "—"}
                  </td>
                  <td data-label="Attempts" class="num">
                    {r.attemptCount}
                  </td>
                  <td data-label="Finished">
                    <When d={r.finishedAt} />
                  </td>
                  <td data-label="Action">
                    <PostForm
                      action={`${base}/triggers/${encodeURIComponent(r.id)}/replay`}
                      csrf={c.var.csrf}
                      class="inline"
                      label={`Replay ${r.id}`}
                    >
                      <button type="submit" class="secondary" aria-label={`Replay ${r.id}`}>
                        Replay
                      </button>
                    </PostForm>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager next={next} first={after ? `${base}/dead-letters` : null} label="Dead letter pages" />
    </>,
    replayFlash(c) ?? undefined,
  );
});
