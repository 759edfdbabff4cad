/** @jsxImportSource hono/jsx */
// One tenant's pages, for the operator (/dashboard/admin/t/:tenantId) and for a portal session
// (/dashboard/portal/:session). Every read and action is filtered by c.var.tenantId, which the mounting
// middleware took from the signed session or checked against the operator's: another tenant's job or
// trigger is simply not found.
import { Hono, type Context } from "hono";
import { nextFires, parseCron, validateTimezone } from "@fairway/core";
import {
  getJob, getTenant, getTrigger, listDeadLetterSummaries, listTriggers, pauseJob, replayTrigger, resumeJob, runJobNow,
  searchJobs, tenantUsage, updateJob, type AttemptRow, type TriggerRow,
} from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { DashboardError, notFound } from "./errors.ts";
import { fmtInZone, fmtMs, fmtTime } from "./format.ts";
import { firstIssue, jobsQuery, PAGE_SIZE, scheduleForm } from "./forms.ts";
import { Page, Pager, PostForm, StatusChip, tenantNav } from "./layout.tsx";
import { scheduleInWords, upcomingFires } from "./schedule-words.ts";

export const tenantPages = new Hono<DashEnv>();

type Flash = { kind: "ok" | "err"; text: string } | null;

const DONE: Record<string, string> = {
  paused: "Job paused. Pending fires were cancelled; running ones finish.",
  resumed: "Job resumed. Missed fires follow the job's misfire policy.",
  schedule: "Schedule saved. It applies from the next fire.",
  run: "Run queued. This page refreshes until the attempt finishes.",
  replayed: "Dead letter replayed: the same trigger (same webhook-id) is pending again.",
};

function flashOf(c: Context): Flash {
  const done = c.req.query("done");
  return done && DONE[done] ? { kind: "ok", text: DONE[done] } : null;
}

function page(c: Context<DashEnv>, title: string, current: string, body: unknown, flash: Flash = flashOf(c), status: 200 | 400 = 200) {
  const base = c.var.base;
  return c.html(
    <Page title={title} scope={c.var.scope} nav={tenantNav(base)} current={`${base}${current}`} flash={flash}>
      {c.var.portal ? null : <p class="sub"><a href={`/dashboard/admin/tenants/${encodeURIComponent(c.var.tenantId)}`}>← Operator view of {c.var.tenantId}</a></p>}
      {body as never}
    </Page>,
    status,
  );
}

/** Tell the executors about new pending work (best effort; they also poll Postgres). */
function announce(c: Context<DashEnv>, type: string, dueAtMs: number): void {
  const d = c.var.dash;
  d.coordinator.markReady(type, c.var.tenantId, dueAtMs).catch((err) => d.log.warn("ready index unavailable", { err }));
  if (dueAtMs <= d.now() + 1000) d.coordinator.wake().catch(() => {});
}

tenantPages.get("/jobs", async (c) => {
  const parsed = jobsQuery.safeParse(c.req.query());
  if (!parsed.success) throw new DashboardError(400, "validation_error", `${firstIssue(parsed.error)}; status is one of active, paused, completed, cancelled`);
  const q = parsed.data;
  const base = c.var.base;
  const rows = await searchJobs(c.var.dash.db, c.var.tenantId, { q: q.q, status: q.status, after: q.after ?? null, limit: PAGE_SIZE + 1 });
  const jobs = rows.slice(0, PAGE_SIZE);
  const keep = new URLSearchParams({ ...(q.q ? { q: q.q } : {}), ...(q.status ? { status: q.status } : {}) });
  const next = rows.length > PAGE_SIZE ? `${base}/jobs?${new URLSearchParams({ ...Object.fromEntries(keep), after: jobs[jobs.length - 1].id })}` : null;
  const now = new Date(c.var.dash.now());
  return page(c, "Jobs", "/jobs", (
    <>
      <h1>Jobs</h1>
      <p class="sub">Tenant <span class="mono">{c.var.tenantId}</span></p>
      <form class="filters" method="get" action={`${base}/jobs`} role="search">
        <div>
          <label for="q">Search</label>
          <input id="q" name="q" type="search" value={q.q ?? ""} placeholder="Name or job id" />
        </div>
        <div>
          <label for="status">Status</label>
          <select id="status" name="status">
            {["", "active", "paused", "completed", "cancelled"].map((s) => (
              <option value={s} selected={(q.status ?? "") === s}>{s === "" ? "Any" : s}</option>
            ))}
          </select>
        </div>
        <div><button type="submit">Filter</button></div>
      </form>
      {jobs.length === 0 ? <p class="card empty">No jobs match.</p> : (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">Jobs</caption>
            <thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Schedule</th><th scope="col">Next fire</th><th scope="col">Type</th></tr></thead>
            <tbody>
              {jobs.map((j) => {
                const next = j.status === "active" ? (j.cron ? upcomingFires(j.cron, j.timezone, now, 1)[0] ?? null : j.nextFireAt) : null;
                return (
                  <tr>
                    <td data-label="Job"><a href={`${base}/jobs/${encodeURIComponent(j.id)}`}>{j.name}</a><br /><span class="mono">{j.id}</span></td>
                    <td data-label="Status"><StatusChip status={j.status} /></td>
                    <td data-label="Schedule">{scheduleInWords(j.cron, j.timezone, j.runAt)}</td>
                    <td data-label="Next fire">{next ? (j.timezone ? fmtInZone(next, j.timezone) : fmtTime(next)) : "—"}</td>
                    <td data-label="Type" class="mono">{j.type}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager next={next} first={q.after ? `${base}/jobs?${keep}` : null} label="Job pages" />
    </>
  ));
});

tenantPages.get("/jobs/:id", async (c) => {
  const d = c.var.dash;
  const job = await getJob(d.db, c.var.tenantId, c.req.param("id"));
  if (!job) throw notFound("job");
  const before = c.req.query("before")?.slice(0, 100) ?? null;
  const triggers = await listTriggers(d.db, c.var.tenantId, job.id, before, PAGE_SIZE + 1);
  return page(c, job.name, "/jobs", <JobDetail c={c} job={job} triggers={triggers} before={before} />);
});

tenantPages.get("/jobs/:id/live/triggers", async (c) => {
  const d = c.var.dash;
  const job = await getJob(d.db, c.var.tenantId, c.req.param("id"));
  if (!job) throw notFound("job");
  const triggers = await listTriggers(d.db, c.var.tenantId, job.id, null, PAGE_SIZE + 1);
  return c.html(<TriggerTable c={c} jobId={job.id} triggers={triggers} before={null} />);
});

type JobRow = NonNullable<Awaited<ReturnType<typeof getJob>>>;

function JobDetail(props: { c: Context<DashEnv>; job: JobRow; triggers: TriggerRow[]; before: string | null; scheduleError?: string }) {
  const { c, job } = props;
  const base = c.var.base;
  const csrf = c.var.csrf;
  const jobUrl = `${base}/jobs/${encodeURIComponent(job.id)}`;
  const now = new Date(c.var.dash.now());
  const fires = job.status === "active" ? upcomingFires(job.cron, job.timezone, now, 5) : [];
  const live = job.status === "active" || job.status === "paused";
  return (
    <>
      <h1>{job.name} <StatusChip status={job.status} /></h1>
      <p class="sub mono">{job.id}</p>
      {live && (
        <div class="actions">
          <PostForm action={`${jobUrl}/run`} csrf={csrf} class="inline" label="Run now"><button type="submit">Run now</button></PostForm>
          {job.status === "active" ? (
            <PostForm action={`${jobUrl}/pause`} csrf={csrf} class="inline" label="Pause"><button type="submit" class="secondary">Pause</button></PostForm>
          ) : (
            <PostForm action={`${jobUrl}/resume`} csrf={csrf} class="inline" label="Resume"><button type="submit" class="secondary">Resume</button></PostForm>
          )}
        </div>
      )}
      <div class="grid">
        <section class="card" aria-labelledby="sched-h">
          <h2 id="sched-h">Schedule</h2>
          <dl class="kv">
            <dt>In words</dt><dd>{scheduleInWords(job.cron, job.timezone, job.runAt)}</dd>
            {job.cron && <><dt>Cron</dt><dd class="mono">{job.cron}</dd><dt>Time zone</dt><dd>{job.timezone}</dd></>}
            {!job.cron && <><dt>Runs at</dt><dd>{fmtTime(job.runAt)}</dd></>}
            <dt>Type</dt><dd class="mono">{job.type}</dd>
            <dt>Target</dt><dd class="mono">{targetText(job.target)}</dd>
            <dt>Overlap / misfire</dt><dd>{job.overlap} / {job.misfire}</dd>
            <dt>Retries</dt><dd>up to {job.maxAttempts} attempts, {fmtMs(job.initialDelayMs)} → {fmtMs(job.maxDelayMs)}</dd>
          </dl>
          {fires.length > 0 && (
            <>
              <h3>Next {fires.length} fires ({job.timezone})</h3>
              <ol class="fires">{fires.map((f) => <li><time datetime={f.toISOString()}>{fmtInZone(f, job.timezone ?? "UTC")}</time></li>)}</ol>
            </>
          )}
        </section>
        {live && (
          <section class="card" aria-labelledby="edit-h">
            <h2 id="edit-h">Edit schedule</h2>
            {props.scheduleError && <p class="flash err" role="alert">{props.scheduleError}</p>}
            <PostForm action={`${jobUrl}/schedule`} csrf={csrf} label="Edit schedule">
              <div class="field">
                <label for="cron">Cron expression</label>
                <input id="cron" name="cron" class="mono" value={job.cron ?? ""} required aria-describedby="cron-hint" />
                <p class="hint" id="cron-hint">5 fields (minute hour day month weekday) or 6 with seconds first, e.g. 0 9 * * 1-5.</p>
              </div>
              <div class="field">
                <label for="timezone">Time zone</label>
                <input id="timezone" name="timezone" value={job.timezone ?? "UTC"} required aria-describedby="tz-hint" />
                <p class="hint" id="tz-hint">An IANA name, e.g. Europe/Berlin.</p>
              </div>
              <button type="submit">Save schedule</button>
            </PostForm>
          </section>
        )}
      </div>
      <h2>Triggers</h2>
      <div data-live={props.before ? undefined : `${jobUrl}/live/triggers`} data-every="2000">
        <TriggerTable c={c} jobId={job.id} triggers={props.triggers} before={props.before} />
      </div>
    </>
  );
}

function targetText(target: unknown): string {
  const t = target as { url?: string; method?: string } | null;
  return t?.url ? `${t.method ?? "POST"} ${t.url}` : "in-process handler";
}

function TriggerTable(props: { c: Context<DashEnv>; jobId: string; triggers: TriggerRow[]; before: string | null }) {
  const base = props.c.var.base;
  const rows = props.triggers.slice(0, PAGE_SIZE);
  const jobUrl = `${base}/jobs/${encodeURIComponent(props.jobId)}`;
  const next = props.triggers.length > PAGE_SIZE ? `${jobUrl}?before=${encodeURIComponent(rows[rows.length - 1].id)}` : null;
  if (rows.length === 0) return <p class="card empty">No triggers yet.</p>;
  return (
    <>
      <div class="table-wrap">
        <table class="stack">
          <caption class="sr">Triggers, newest first</caption>
          <thead><tr><th scope="col">Trigger</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Scheduled for</th><th scope="col" class="num">Attempts</th><th scope="col">Reason</th></tr></thead>
          <tbody>
            {rows.map((t) => (
              <tr>
                <td data-label="Trigger"><a class="mono" href={`${base}/triggers/${encodeURIComponent(t.id)}`}>{t.id}</a></td>
                <td data-label="Kind">{t.kind}</td>
                <td data-label="Status"><StatusChip status={t.status} /></td>
                <td data-label="Scheduled for">{fmtTime(t.scheduledFor)}</td>
                <td data-label="Attempts" class="num">{t.attemptCount}</td>
                <td data-label="Reason" class="mono">{t.reason ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager next={next} first={props.before ? jobUrl : null} label="Trigger pages" />
    </>
  );
}

tenantPages.post("/jobs/:id/run", async (c) => {
  const d = c.var.dash;
  const trigger = await runJobNow(d.db, c.var.tenantId, c.req.param("id"), new Date(d.now()));
  if (!trigger) throw new DashboardError(404, "not_found", "job not found, or it is completed or cancelled: only active and paused jobs can run now");
  announce(c, trigger.type, d.now());
  return c.redirect(`${c.var.base}/triggers/${encodeURIComponent(trigger.id)}?done=run`, 303);
});

tenantPages.post("/jobs/:id/pause", async (c) => {
  const job = await pauseJob(c.var.dash.db, c.var.tenantId, c.req.param("id"));
  if (!job) throw notFound("job");
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(job.id)}?done=paused`, 303);
});

tenantPages.post("/jobs/:id/resume", async (c) => {
  const d = c.var.dash;
  const job = await resumeJob(d.db, c.var.tenantId, c.req.param("id"), new Date(d.now()));
  if (!job) throw notFound("job");
  announce(c, job.type, d.now());
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(job.id)}?done=resumed`, 303);
});

tenantPages.post("/jobs/:id/schedule", async (c) => {
  const d = c.var.dash;
  const existing = await getJob(d.db, c.var.tenantId, c.req.param("id"));
  if (!existing) throw notFound("job");
  const refuse = async (message: string) => {
    const triggers = await listTriggers(d.db, c.var.tenantId, existing.id, null, PAGE_SIZE + 1);
    return page(c, existing.name, "/jobs", <JobDetail c={c} job={existing} triggers={triggers} before={null} scheduleError={message} />, { kind: "err", text: "Schedule not saved." }, 400);
  };
  const parsed = scheduleForm.safeParse(await c.req.parseBody());
  if (!parsed.success) return refuse(firstIssue(parsed.error));
  const cron = parseCron(parsed.data.cron);
  if (!cron.ok) return refuse(`cron: ${cron.message}`);
  if (!validateTimezone(parsed.data.timezone)) return refuse(`timezone: "${parsed.data.timezone}" is not an IANA time zone; use e.g. Europe/Berlin`);
  const now = new Date(d.now());
  const [next] = nextFires(cron.expr, parsed.data.timezone, now, 1);
  if (!next) return refuse("cron: the expression never fires");
  const job = await updateJob(d.db, c.var.tenantId, existing.id, { cron: cron.expr, timezone: parsed.data.timezone, runAt: null, nextFireAt: next }, now);
  if (!job) throw notFound("job");
  d.log.info("job schedule updated", { tenantId: c.var.tenantId, jobId: job.id, via: "dashboard" });
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(job.id)}?done=schedule`, 303);
});

tenantPages.get("/triggers/:id", async (c) => {
  const d = c.var.dash;
  const t = await getTrigger(d.db, c.var.tenantId, c.req.param("id"));
  if (!t) throw notFound("trigger");
  const job = await getJob(d.db, c.var.tenantId, t.jobId);
  const base = c.var.base;
  const triggerUrl = `${base}/triggers/${encodeURIComponent(t.id)}`;
  const open = t.status === "pending" || t.status === "running";
  return page(c, `Trigger ${t.id}`, "/jobs", (
    <>
      <h1>Trigger <span class="mono">{t.id}</span></h1>
      <p class="sub">Job <a href={`${base}/jobs/${encodeURIComponent(t.jobId)}`}>{job?.name ?? t.jobId}</a> · the webhook-id of every delivery of this trigger is its id.</p>
      <div data-live={open ? `${triggerUrl}/live` : undefined} data-every="1500">
        <TriggerBody c={c} t={t} />
      </div>
      <section class="card" aria-labelledby="req-h">
        <h2 id="req-h">Request</h2>
        <dl class="kv">
          <dt>Target</dt><dd class="mono">{targetText(job?.target)}</dd>
          <dt>Header names</dt><dd class="mono">{headerNames(job?.target)}</dd>
        </dl>
        <h3>Payload</h3>
        <pre>{JSON.stringify(job?.payload ?? null, null, 2)}</pre>
        <p class="hint">The job's current target and payload. Header values are not shown.</p>
      </section>
    </>
  ));
});

tenantPages.get("/triggers/:id/live", async (c) => {
  const t = await getTrigger(c.var.dash.db, c.var.tenantId, c.req.param("id"));
  if (!t) throw notFound("trigger");
  return c.html(<TriggerBody c={c} t={t} />);
});

function headerNames(target: unknown): string {
  const h = (target as { headers?: Record<string, string> } | null)?.headers;
  return h && Object.keys(h).length > 0 ? Object.keys(h).join(", ") : "—";
}

function TriggerBody(props: { c: Context<DashEnv>; t: TriggerRow & { attempts: AttemptRow[] } }) {
  const { c, t } = props;
  return (
    <>
      <section class="card" aria-labelledby="trg-h">
        <h2 id="trg-h">Status <StatusChip status={t.status} /></h2>
        <dl class="kv">
          <dt>Kind</dt><dd>{t.kind}</dd>
          <dt>Scheduled for</dt><dd>{fmtTime(t.scheduledFor)}</dd>
          <dt>Attempts</dt><dd>{t.attemptCount} of {t.maxAttempts}</dd>
          {t.status === "pending" && <><dt>Next attempt</dt><dd>{fmtTime(t.nextAttemptAt)}</dd></>}
          <dt>Reason</dt><dd class="mono">{t.reason ?? "—"}</dd>
          <dt>Finished</dt><dd>{fmtTime(t.finishedAt)}</dd>
        </dl>
        {t.status === "dead" && (
          <div class="actions">
            <PostForm action={`${c.var.base}/triggers/${encodeURIComponent(t.id)}/replay`} csrf={c.var.csrf} class="inline" label="Replay">
              <button type="submit">Replay</button>
            </PostForm>
          </div>
        )}
      </section>
      <h2>Attempts</h2>
      {t.attempts.length === 0 ? <p class="card empty">No finished attempt yet.</p> : t.attempts.map((a) => (
        <section class="card attempt" aria-label={`Attempt ${a.attempt}`}>
          <h3>Attempt {a.attempt} <StatusChip status={a.outcome} /></h3>
          <dl class="kv">
            <dt>HTTP status</dt><dd>{a.httpStatus ?? "—"}</dd>
            <dt>Duration</dt><dd>{fmtMs(a.durationMs)}</dd>
            <dt>Started</dt><dd>{fmtTime(a.startedAt)}</dd>
            {a.error && <><dt>Error</dt><dd class="mono">{a.error}</dd></>}
          </dl>
          <h4>Response body</h4>
          <pre class="response">{a.responseBody ?? "(none)"}</pre>
        </section>
      ))}
    </>
  );
}

tenantPages.post("/triggers/:id/replay", async (c) => {
  const d = c.var.dash;
  const id = c.req.param("id");
  const replayed = await replayTrigger(d.db, c.var.tenantId, id);
  if (!replayed) {
    const t = await getTrigger(d.db, c.var.tenantId, id);
    if (!t) throw notFound("trigger");
    throw new DashboardError(409, "not_dead", `Only dead triggers can be replayed; this one is ${t.status}.`);
  }
  const t = await getTrigger(d.db, c.var.tenantId, id);
  announce(c, t!.type, d.now());
  return c.redirect(`${c.var.base}/triggers/${encodeURIComponent(id)}?done=replayed`, 303);
});

tenantPages.get("/dead-letters", async (c) => {
  const d = c.var.dash;
  const after = c.req.query("after")?.slice(0, 100) ?? null;
  const base = c.var.base;
  const rows = await listDeadLetterSummaries(d.db, { tenantId: c.var.tenantId, after: after ? { tenantId: c.var.tenantId, triggerId: after } : null, limit: PAGE_SIZE + 1 });
  const list = rows.slice(0, PAGE_SIZE);
  const next = rows.length > PAGE_SIZE ? `${base}/dead-letters?after=${encodeURIComponent(list[list.length - 1].id)}` : null;
  return page(c, "Dead letters", "/dead-letters", (
    <>
      <h1>Dead letters</h1>
      <p class="sub">Triggers that used up their attempts or were refused for good. Replay sends the same trigger again, with the same webhook-id.</p>
      {list.length === 0 ? <p class="card empty">No dead letters.</p> : (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">Dead letters</caption>
            <thead><tr><th scope="col">Trigger</th><th scope="col">Job</th><th scope="col">Reason</th><th scope="col" class="num">Attempts</th><th scope="col">Finished</th><th scope="col"><span class="sr">Action</span></th></tr></thead>
            <tbody>{list.map((r) => (
              <tr>
                <td data-label="Trigger"><a class="mono" href={`${base}/triggers/${encodeURIComponent(r.id)}`}>{r.id}</a></td>
                <td data-label="Job"><a href={`${base}/jobs/${encodeURIComponent(r.jobId)}`}>{r.jobName}</a></td>
                <td data-label="Reason" class="mono">{r.reason ?? "—"}</td>
                <td data-label="Attempts" class="num">{r.attemptCount}</td>
                <td data-label="Finished">{fmtTime(r.finishedAt)}</td>
                <td data-label="Action">
                  <PostForm action={`${base}/triggers/${encodeURIComponent(r.id)}/replay`} csrf={c.var.csrf} class="inline" label={`Replay ${r.id}`}>
                    <button type="submit" class="secondary" aria-label={`Replay ${r.id}`}>Replay</button>
                  </PostForm>
                </td>
              </tr>
            ))}</tbody>
          </table>
        </div>
      )}
      <Pager next={next} first={after ? `${base}/dead-letters` : null} label="Dead letter pages" />
    </>
  ));
});

tenantPages.get("/usage", async (c) => {
  const d = c.var.dash;
  const [tenant, usage] = await Promise.all([getTenant(d.db, c.var.tenantId), tenantUsage(d.db, c.var.tenantId)]);
  if (!tenant) throw notFound("tenant");
  return page(c, "Quota & usage", "/usage", (
    <>
      <h1>Quota &amp; usage</h1>
      <div class="grid">
        <section class="card" aria-labelledby="use-h">
          <h2 id="use-h">Usage now</h2>
          <div data-live={`${c.var.base}/live/usage`} data-every="3000"><UsageList usage={usage} maxInFlight={tenant.maxInFlight} maxJobs={tenant.maxJobs} /></div>
        </section>
        <section class="card" aria-labelledby="quota-h">
          <h2 id="quota-h">Quota</h2>
          <dl class="kv">
            <dt>In-flight cap</dt><dd>{tenant.maxInFlight}</dd>
            <dt>Weight</dt><dd>{tenant.weight}</dd>
            <dt>Rate</dt><dd>{tenant.ratePerSecond == null ? "unlimited" : `${tenant.ratePerSecond}/s, burst ${tenant.burst ?? Math.max(1, tenant.ratePerSecond)}`}</dd>
            <dt>Max live jobs</dt><dd>{tenant.maxJobs}</dd>
            <dt>Max payload</dt><dd>{tenant.maxPayloadBytes.toLocaleString("en")} bytes</dd>
          </dl>
        </section>
      </div>
      <h2>Secrets and notification channels</h2>
      <section class="card reserved" aria-label="Secrets and notification channels">
        <p>Not available on this server yet. Secrets (names only) and notification channels will be listed here.</p>
      </section>
    </>
  ));
});

tenantPages.get("/live/usage", async (c) => {
  const d = c.var.dash;
  const [tenant, usage] = await Promise.all([getTenant(d.db, c.var.tenantId), tenantUsage(d.db, c.var.tenantId)]);
  if (!tenant) throw notFound("tenant");
  return c.html(<UsageList usage={usage} maxInFlight={tenant.maxInFlight} maxJobs={tenant.maxJobs} />);
});

function UsageList(props: { usage: Awaited<ReturnType<typeof tenantUsage>>; maxInFlight: number; maxJobs: number }) {
  const u = props.usage;
  return (
    <dl class="kv">
      <dt>Running</dt><dd>{u.running} of {props.maxInFlight}</dd>
      <dt>Due now</dt><dd>{u.due}</dd>
      <dt>Pending</dt><dd>{u.pending}</dd>
      <dt>Oldest lag</dt><dd>{fmtMs(u.oldestDueLagMs)}</dd>
      <dt>Live jobs</dt><dd>{u.jobs} of {props.maxJobs}</dd>
      <dt>Dead letters</dt><dd>{u.dead}</dd>
    </dl>
  );
}
