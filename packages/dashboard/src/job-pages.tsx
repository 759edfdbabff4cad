/** @jsxImportSource hono/jsx */
// A tenant's jobs: the searchable list, a job with its schedule in words, next fires and triggers, and
// its actions (run now, pause, resume, edit schedule).
import { Hono, type Context } from "hono";
import { getJob, lastRuns, listTriggers, searchJobs, type LastRun, type TriggerRow } from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { DashboardError, notFound, refusalOf } from "./errors.ts";
import { fmtMs } from "./format.ts";
import { When } from "./time.tsx";
import { firstIssue, jobsQuery, PAGE_SIZE, scheduleForm } from "./forms.ts";
import { type BackfillForm, FlowControl, FlowControlRows, offsetOf } from "./flow-control.tsx";
import { Pager, PostForm, StatusChip } from "./layout.tsx";
import { scheduleInWords, upcomingFires } from "./schedule-words.ts";
import { page, targetText } from "./tenant-shell.tsx";

export const jobPages = new Hono<DashEnv>();

jobPages.get("/jobs", async (c) => {
  const parsed = jobsQuery.safeParse(c.req.query());
  if (!parsed.success)
    throw new DashboardError(
      400,
      "validation_error",
      `${firstIssue(parsed.error)}; status is one of active, paused, completed, failed, cancelled`,
    );
  const q = parsed.data;
  const base = c.var.base;
  const rows = await searchJobs(c.var.dash.db, c.var.tenantId, {
    q: q.q,
    status: q.status,
    failing: q.failing,
    ...(q.tag ? { tags: tagOf(q.tag) } : {}),
    after: q.after ?? null,
    limit: PAGE_SIZE + 1,
  });
  const jobs = rows.slice(0, PAGE_SIZE);
  const last = await lastRuns(
    c.var.dash.db,
    c.var.tenantId,
    jobs.map((j) => j.id),
  );
  const keep = new URLSearchParams({
    ...(q.q ? { q: q.q } : {}),
    ...(q.status ? { status: q.status } : {}),
    ...(q.failing ? { failing: "true" } : {}),
    ...(q.tag ? { tag: q.tag } : {}),
  });
  const next =
    rows.length > PAGE_SIZE
      ? `${base}/jobs?${new URLSearchParams({ ...Object.fromEntries(keep), after: jobs[jobs.length - 1].id })}`
      : null;
  const now = new Date(c.var.dash.now());
  return page(
    c,
    "Jobs",
    "/jobs",
    <>
      <h1>Jobs</h1>
      <p class="sub">
        Tenant <span class="mono">{c.var.tenantId}</span>
      </p>
      <p class="actions">
        <a class="button" href={`${base}/jobs/new`}>
          New job
        </a>
      </p>
      <form class="filters" method="get" action={`${base}/jobs`} aria-label="Job filters">
        <div>
          <label for="q">Search</label>
          <input id="q" name="q" type="search" value={q.q ?? ""} placeholder="Name or job id" />
        </div>
        <div>
          <label for="status">Status</label>
          <select id="status" name="status">
            {["", "active", "paused", "completed", "failed", "cancelled"].map((s) => (
              <option value={s} selected={(q.status ?? "") === s}>
                {s === "" ? "Any" : s}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="tag">Tag</label>
          <input id="tag" name="tag" type="search" value={q.tag ?? ""} placeholder="name:value" />
        </div>
        <div class="check">
          <input id="failing" name="failing" type="checkbox" value="true" checked={q.failing} />
          <label for="failing">Failing only</label>
        </div>
        <div>
          <button type="submit">Filter</button>
        </div>
      </form>
      {jobs.length === 0 ? (
        <p class="card empty">No jobs match.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">Jobs</caption>
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Status</th>
                <th scope="col">Last run</th>
                <th scope="col">Schedule</th>
                <th scope="col">Next fire</th>
                <th scope="col">Type</th>
              </tr>
            </thead>
            <tbody>
              {jobs.map((j) => {
                const next =
                  j.status === "active"
                    ? j.cron
                      ? (upcomingFires(j.cron, j.timezone, now, 1, offsetOf(j))[0] ?? null)
                      : (j.nextFireAt ?? j.runAt)
                    : null;
                return (
                  <tr>
                    <td data-label="Job">
                      <a href={`${base}/jobs/${encodeURIComponent(j.id)}`}>{j.name}</a>
                      <br />
                      <span class="mono">{j.id}</span>
                      {j.tags && Object.keys(j.tags).length > 0 && (
                        <>
                          <br />
                          <span class="mono muted">{tagsText(j.tags)}</span>
                        </>
                      )}
                    </td>
                    <td data-label="Status">
                      <StatusChip status={j.status} />
                    </td>
                    <td data-label="Last run">
                      <LastRunCell last={last.get(j.id) ?? null} streak={j.failureStreak} />
                    </td>
                    <td data-label="Schedule">{scheduleInWords(j.cron, j.timezone, j.runAt, j.spreadMs)}</td>
                    <td data-label="Next fire">
                      <When d={next} />
                    </td>
                    <td data-label="Type" class="mono">
                      {j.type}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager next={next} first={q.after ? `${base}/jobs?${keep}` : null} label="Job pages" />
    </>,
  );
});

jobPages.get("/jobs/:id", async (c) => {
  const d = c.var.dash;
  const job = await getJob(d.db, c.var.tenantId, c.req.param("id"));
  if (!job) throw notFound("job");
  const before = c.req.query("before")?.slice(0, 100) ?? null;
  const triggers = await listTriggers(d.db, c.var.tenantId, job.id, before, PAGE_SIZE + 1);
  return page(c, job.name, "/jobs", <JobDetail c={c} job={job} triggers={triggers} before={before} />);
});

jobPages.get("/jobs/:id/live/triggers", async (c) => {
  const d = c.var.dash;
  const job = await getJob(d.db, c.var.tenantId, c.req.param("id"));
  if (!job) throw notFound("job");
  const triggers = await listTriggers(d.db, c.var.tenantId, job.id, null, PAGE_SIZE + 1);
  return c.html(<TriggerTable c={c} jobId={job.id} triggers={triggers} before={null} />);
});

type JobRow = NonNullable<Awaited<ReturnType<typeof getJob>>>;

/** Payloads may be up to 10 MiB: the page shows the first PAYLOAD_SHOWN characters of its JSON. */
const PAYLOAD_SHOWN = 4000;
function payloadText(payload: unknown): string {
  const text = JSON.stringify(payload, null, 2);
  return text.length > PAYLOAD_SHOWN ? `${text.slice(0, PAYLOAD_SHOWN)}\n… (${text.length} characters)` : text;
}

/** A job's last outcome, when, and its failure streak (dead fires in a row) when it has one. */
function LastRunCell(props: { last: LastRun | null; streak: number }) {
  if (!props.last) return <span class="muted">Never run</span>;
  const label = props.last.outcome.replace("_", " ");
  return (
    <>
      <span class={`chip s-${props.last.outcome}`}>{label}</span>{" "}
      <span class="mono">
        <When d={props.last.at} />
      </span>
      {props.streak > 0 && (
        <>
          <br />
          <span class="streak">
            {props.streak} dead {props.streak === 1 ? "fire" : "fires"} in a row
          </span>
        </>
      )}
    </>
  );
}

function JobDetail(props: {
  c: Context<DashEnv>;
  job: JobRow;
  triggers: TriggerRow[];
  before: string | null;
  scheduleError?: string;
  backfillError?: BackfillForm;
}) {
  const { c, job } = props;
  const base = c.var.base;
  const csrf = c.var.csrf;
  const jobUrl = `${base}/jobs/${encodeURIComponent(job.id)}`;
  const now = new Date(c.var.dash.now());
  const fires = job.status === "active" ? upcomingFires(job.cron, job.timezone, now, 5, offsetOf(job)) : [];
  const live = job.status === "active" || job.status === "paused";
  return (
    <>
      <h1>
        {job.name} <StatusChip status={job.status} />
      </h1>
      <p class="sub mono">{job.id}</p>
      {live && (
        <div class="actions">
          <PostForm action={`${jobUrl}/run`} csrf={csrf} class="inline" label="Run now">
            <button type="submit">Run now</button>
          </PostForm>
          {job.status === "active" ? (
            <PostForm action={`${jobUrl}/pause`} csrf={csrf} class="inline" label="Pause">
              <button type="submit" class="secondary">
                Pause
              </button>
            </PostForm>
          ) : (
            <PostForm action={`${jobUrl}/resume`} csrf={csrf} class="inline" label="Resume">
              <button type="submit" class="secondary">
                Resume
              </button>
            </PostForm>
          )}
          <a class="button secondary" href={`${jobUrl}/edit`}>
            Edit job
          </a>
          <PostForm action={`${jobUrl}/cancel`} csrf={csrf} class="inline" label="Cancel job">
            <button type="submit" class="danger">
              Cancel job
            </button>
          </PostForm>
        </div>
      )}
      <div class="grid">
        <section class="card" aria-labelledby="sched-h">
          <h2 id="sched-h">Schedule</h2>
          <dl class="kv">
            <dt>In words</dt>
            <dd>{scheduleInWords(job.cron, job.timezone, job.runAt, job.spreadMs)}</dd>
            {job.cron && (
              <>
                <dt>Cron</dt>
                <dd class="mono">{job.cron}</dd>
                <dt>Time zone</dt>
                <dd>{job.timezone}</dd>
              </>
            )}
            {!job.cron && (
              <>
                <dt>Runs at</dt>
                <dd>
                  <When d={job.runAt} />
                </dd>
              </>
            )}
            <dt>Type</dt>
            <dd class="mono">{job.type}</dd>
            <dt>Tags</dt>
            <dd class="mono">{job.tags ? tagsText(job.tags as Record<string, string>) || "—" : "—"}</dd>
            <dt>Target</dt>
            <dd class="mono">{targetText(job.target, job.type)}</dd>
            <dt>Fairness key</dt>
            <dd class="mono">{job.key ?? <span class="muted">none</span>}</dd>
            <dt>Payload</dt>
            <dd>
              {job.payload === null || job.payload === undefined ? (
                <span class="muted">none</span>
              ) : (
                <pre class="mono">{payloadText(job.payload)}</pre>
              )}
            </dd>
            <dt>Overlap / misfire</dt>
            <dd>
              {job.overlap} / {job.misfire}
            </dd>
            <FlowControlRows job={job} />
            <dt>Retries</dt>
            <dd>
              up to {job.maxAttempts} attempts, {fmtMs(job.initialDelayMs)} → {fmtMs(job.maxDelayMs)}
            </dd>
          </dl>
          {fires.length > 0 && (
            <>
              <h3>Next {fires.length} fires</h3>
              <ol class="fires">
                {fires.map((f) => (
                  <li>
                    <When d={f} />
                  </li>
                ))}
              </ol>
            </>
          )}
        </section>
        {live && (
          <section class="card" aria-labelledby="edit-h">
            <h2 id="edit-h">Edit schedule</h2>
            {props.scheduleError && (
              <p class="flash err" role="alert">
                {props.scheduleError}
              </p>
            )}
            <PostForm action={`${jobUrl}/schedule`} csrf={csrf} label="Edit schedule">
              <div class="field">
                <label for="cron">Cron expression</label>
                <input
                  id="cron"
                  name="cron"
                  class="mono"
                  value={job.cron ?? ""}
                  required
                  aria-describedby="cron-hint"
                />
                <p class="hint" id="cron-hint">
                  5 fields (minute hour day month weekday) or 6 with seconds first, e.g. 0 9 * * 1-5.
                </p>
              </div>
              <div class="field">
                <label for="timezone">Time zone</label>
                <input
                  id="timezone"
                  name="timezone"
                  value={job.timezone ?? "UTC"}
                  required
                  aria-describedby="tz-hint"
                />
                <p class="hint" id="tz-hint">
                  An IANA name, e.g. Europe/Berlin.
                </p>
              </div>
              <button type="submit">Save schedule</button>
            </PostForm>
          </section>
        )}
      </div>
      <FlowControl c={c} job={job} backfillError={props.backfillError} />
      <h2>Triggers</h2>
      <div data-live={props.before ? undefined : `${jobUrl}/live/triggers`} data-every="2000">
        <TriggerTable c={c} jobId={job.id} triggers={props.triggers} before={props.before} />
      </div>
    </>
  );
}

function TriggerTable(props: { c: Context<DashEnv>; jobId: string; triggers: TriggerRow[]; before: string | null }) {
  const base = props.c.var.base;
  const rows = props.triggers.slice(0, PAGE_SIZE);
  const jobUrl = `${base}/jobs/${encodeURIComponent(props.jobId)}`;
  const next =
    props.triggers.length > PAGE_SIZE ? `${jobUrl}?before=${encodeURIComponent(rows[rows.length - 1].id)}` : null;
  if (rows.length === 0) return <p class="card empty">No triggers yet.</p>;
  return (
    <>
      <div class="table-wrap">
        <table class="stack">
          <caption class="sr">Triggers, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Trigger</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Scheduled for</th>
              <th scope="col" class="num">
                Attempts
              </th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr>
                <td data-label="Trigger">
                  <a class="mono" href={`${base}/triggers/${encodeURIComponent(t.id)}`}>
                    {t.id}
                  </a>
                </td>
                <td data-label="Kind">{t.kind}</td>
                <td data-label="Status">
                  <StatusChip status={t.status} />
                </td>
                <td data-label="Scheduled for">
                  <When d={t.scheduledFor} />
                </td>
                <td data-label="Attempts" class="num">
                  {t.attemptCount}
                </td>
                <td data-label="Reason" class="mono">
                  {t.reason ?? "—"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager next={next} first={props.before ? jobUrl : null} label="Trigger pages" />
    </>
  );
}

jobPages.post("/jobs/:id/run", async (c) => {
  const trigger = await c.var.dash.commands.runJob(c.var.tenantId, c.req.param("id"));
  return c.redirect(`${c.var.base}/triggers/${encodeURIComponent(trigger.id)}?done=run`, 303);
});

jobPages.post("/jobs/:id/pause", async (c) => {
  const job = await c.var.dash.commands.pauseJob(c.var.tenantId, c.req.param("id"));
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(job.id)}?done=paused`, 303);
});

jobPages.post("/jobs/:id/resume", async (c) => {
  const job = await c.var.dash.commands.resumeJob(c.var.tenantId, c.req.param("id"));
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(job.id)}?done=resumed`, 303);
});

jobPages.post("/jobs/:id/schedule", async (c) => {
  const d = c.var.dash;
  const existing = await getJob(d.db, c.var.tenantId, c.req.param("id"));
  if (!existing) throw notFound("job");
  const refuse = async (message: string) => {
    const triggers = await listTriggers(d.db, c.var.tenantId, existing.id, null, PAGE_SIZE + 1);
    return page(
      c,
      existing.name,
      "/jobs",
      <JobDetail c={c} job={existing} triggers={triggers} before={null} scheduleError={message} />,
      { kind: "err", text: "Schedule not saved." },
      400,
    );
  };
  const parsed = scheduleForm.safeParse(await c.req.parseBody());
  if (!parsed.success) return refuse(firstIssue(parsed.error));
  // The API's own check of a schedule (cron, time zone, a first fire), with its messages.
  let job: { id: string };
  try {
    job = await d.commands.updateJob(c.var.tenantId, existing.id, {
      schedule: { cron: parsed.data.cron, timezone: parsed.data.timezone },
    });
  } catch (err) {
    const r = refusalOf(err);
    if (r?.status !== 400) throw err;
    return refuse(r.message);
  }
  d.log.info("job schedule updated", { tenantId: c.var.tenantId, jobId: job.id, via: "dashboard" });
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(job.id)}?done=schedule`, 303);
});

jobPages.post("/jobs/:id/backfill", async (c) => {
  const d = c.var.dash;
  const existing = await getJob(d.db, c.var.tenantId, c.req.param("id"));
  if (!existing) throw notFound("job");
  const b = await c.req.parseBody();
  const text = (v: unknown) => (typeof v === "string" ? v.trim().slice(0, 100) : "");
  const form = { from: text(b.from), to: text(b.to), overlap: text(b.overlap) || "skip" };
  let started: { id: string; fires: number; skipped: number };
  try {
    started = await d.commands.startBackfill(c.var.tenantId, existing.id, form);
  } catch (err) {
    // The API's refusal, word for word, with the form as typed.
    const r = refusalOf(err);
    if (r?.status !== 400 && r?.status !== 409) throw err;
    const triggers = await listTriggers(d.db, c.var.tenantId, existing.id, null, PAGE_SIZE + 1);
    return page(
      c,
      existing.name,
      "/jobs",
      <JobDetail
        c={c}
        job={existing}
        triggers={triggers}
        before={null}
        backfillError={{ ...form, error: r.message }}
      />,
      { kind: "err", text: "Backfill not started." },
      400,
    );
  }
  d.log.info("backfill started", { tenantId: c.var.tenantId, backfillId: started.id, via: "dashboard" });
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(existing.id)}?done=backfill_started`, 303);
});

/** name:value: the first colon ends the name (as GET /v1/jobs?tag= reads it). */
function tagOf(tag: string): Record<string, string> {
  const at = tag.indexOf(":");
  return { [tag.slice(0, at)]: tag.slice(at + 1) };
}

/** A job's tags as one line, name:value each. */
function tagsText(tags: Record<string, string>): string {
  return Object.entries(tags)
    .map(([k, v]) => `${k}:${v}`)
    .join(" ");
}
