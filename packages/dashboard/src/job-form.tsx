/** @jsxImportSource hono/jsx */
// Creating, editing and cancelling a job: one form for both, sent through the command layer (the API's
// checks and messages); a refusal shows the form again, as typed, with the message next to its field,
// and writes nothing. The schedule field previews its words and next fires as you type
// (job-form.js calls /jobs/preview, which uses the scheduler's own cron code).
import { Hono, type Context } from "hono";
import { parseCron, validateTimezone } from "@fairway/core";
import { getJob } from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { notFound, refusalOf } from "./errors.ts";
import {
  bodyOfValues,
  EMPTY_FORM,
  fieldOf,
  FormRefusal,
  keptHeaders,
  KEPT,
  METHODS,
  MISFIRES,
  ON_BUSY,
  OVERLAPS,
  patchOf,
  valuesOfForm,
  valuesOfJob,
  type Field,
  type JobFormValues,
} from "./job-form-body.ts";
import { PostForm } from "./layout.tsx";
import { scheduleInWords, upcomingFires } from "./schedule-words.ts";
import { page } from "./tenant-shell.tsx";
import { When } from "./time.tsx";

export const jobFormPages = new Hono<DashEnv>();

const OVERLAP_WORDS: Record<(typeof OVERLAPS)[number], string> = {
  allow: "allow: run it alongside",
  skip: "skip: drop the new fire",
  buffer_one: "buffer_one: keep one to run next",
};
const MISFIRE_WORDS: Record<(typeof MISFIRES)[number], string> = {
  fire_once: "fire_once: one catch-up",
  skip: "skip: none",
  fire_all: "fire_all: every missed fire",
};
const ON_BUSY_WORDS: Record<(typeof ON_BUSY)[number], string> = {
  queue: "queue: wait for a slot",
  skip: "skip: drop the new trigger",
  replace_queued: "replace_queued: keep only the newest waiting",
  cancel_running: "cancel_running: cut the running one",
};

const PREVIEW_FIRES = 5;

/** The schedule's words and next fires, or why it is not a schedule; also the no-script preview. */
function preview(cron: string, timezone: string, nowMs: number): { words: string; fires: Date[]; error?: string } {
  if (!cron.trim()) return { words: "", fires: [], error: "Type a cron expression to see when it fires." };
  // The API's own checks, in its words: what a submit would answer, shown while typing.
  const parsed = parseCron(cron.trim());
  if (!parsed.ok) return { words: "", fires: [], error: `Not a schedule yet: ${parsed.message}.` };
  const zone = timezone.trim() || "UTC";
  if (!validateTimezone(zone))
    return {
      words: "",
      fires: [],
      error: `Not a schedule yet: "${zone}" is not an IANA time zone (e.g. "Europe/Berlin").`,
    };
  const fires = upcomingFires(cron.trim(), zone, new Date(nowMs), PREVIEW_FIRES);
  if (fires.length === 0) return { words: "", fires, error: "Not a schedule yet: the expression never fires." };
  return { words: scheduleInWords(cron.trim(), timezone.trim() || "UTC", null), fires };
}

jobFormPages.get("/jobs/preview", (c) => {
  const cron = (c.req.query("cron") ?? "").slice(0, 200);
  const tz = (c.req.query("timezone") ?? "").slice(0, 64);
  const p = preview(cron, tz, c.var.dash.now());
  return c.json({ words: p.words, fires: p.fires.map((f) => f.toISOString()), error: p.error ?? null });
});

jobFormPages.get("/jobs/new", (c) => formPage(c, null, EMPTY_FORM));

jobFormPages.post("/jobs/new", async (c) => {
  const d = c.var.dash;
  const values = valuesOfForm(await c.req.parseBody());
  let id: string;
  try {
    id = (await d.commands.createJob(c.var.tenantId, bodyOfValues(values))).id;
  } catch (err) {
    return refused(c, null, values, err);
  }
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(id)}?done=created`, 303);
});

jobFormPages.get("/jobs/:id/edit", async (c) => {
  const job = await getJob(c.var.dash.db, c.var.tenantId, c.req.param("id"));
  if (!job) throw notFound("job");
  return formPage(c, job, valuesOfJob(job));
});

jobFormPages.post("/jobs/:id/edit", async (c) => {
  const d = c.var.dash;
  const job = await getJob(d.db, c.var.tenantId, c.req.param("id"));
  if (!job) throw notFound("job");
  const values = valuesOfForm(await c.req.parseBody());
  values.type = job.type;
  // A debounce is set by the create that made the job (the API refuses one in a PATCH): kept as it is.
  const stored = valuesOfJob(job);
  values.debounceKey = stored.debounceKey;
  values.debouncePeriodMs = stored.debouncePeriodMs;
  values.debounceMaxWaitMs = stored.debounceMaxWaitMs;
  try {
    const kept = keptHeaders(job);
    const patch = patchOf(bodyOfValues(valuesOfJob(job), kept), bodyOfValues(values, kept));
    if (Object.keys(patch).length > 0) await d.commands.updateJob(c.var.tenantId, job.id, patch);
  } catch (err) {
    return refused(c, job, values, err);
  }
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(job.id)}?done=edited`, 303);
});

jobFormPages.post("/jobs/:id/cancel", async (c) => {
  const job = await c.var.dash.commands.cancelJob(c.var.tenantId, c.req.param("id"));
  return c.redirect(`${c.var.base}/jobs/${encodeURIComponent(job.id)}?done=cancelled`, 303);
});

type JobRow = NonNullable<Awaited<ReturnType<typeof getJob>>>;

/** A refusal from the form's shape or the command layer, shown on the form; anything else is thrown. */
function refused(c: Context<DashEnv>, job: JobRow | null, values: JobFormValues, err: unknown) {
  if (err instanceof FormRefusal) return formPage(c, job, values, { field: err.field, message: err.message });
  const r = refusalOf(err);
  if (!r || r.status === 404) throw err;
  return formPage(c, job, values, { field: fieldOf(r.message), message: r.message });
}

function formPage(
  c: Context<DashEnv>,
  job: JobRow | null,
  v: JobFormValues,
  error?: { field: Field | null; message: string },
) {
  const title = job ? `Edit ${job.name}` : "New job";
  return page(
    c,
    title,
    "/jobs",
    <JobForm c={c} job={job} v={v} error={error} />,
    error ? { kind: "err", text: job ? "Job not saved: nothing was changed." : "Job not created." } : null,
    error ? 400 : 200,
  );
}

function JobForm(props: {
  c: Context<DashEnv>;
  job: JobRow | null;
  v: JobFormValues;
  error?: { field: Field | null; message: string };
}) {
  const { c, job, v, error } = props;
  const base = c.var.base;
  const action = job ? `${base}/jobs/${encodeURIComponent(job.id)}/edit` : `${base}/jobs/new`;
  const p = preview(v.cron, v.timezone, c.var.dash.now());
  /** The error's id when it is about `f`: the field points at it with aria-describedby. */
  const errFor = (f: Field) => (error?.field === f ? `${f}-error` : undefined);
  const describedBy = (f: Field, hint?: string) => [errFor(f), hint].filter(Boolean).join(" ") || undefined;
  const Err = (p: { f: Field }) =>
    error?.field === p.f ? (
      <p class="field-error" id={`${p.f}-error`} role="alert">
        {error.message}
      </p>
    ) : null;
  const Text = (p: { f: Field; label: string; hint?: string; mono?: boolean; disabled?: boolean; type?: string }) => (
    <div class="field">
      <label for={p.f}>{p.label}</label>
      <input
        id={p.f}
        name={p.f}
        type={p.type ?? "text"}
        class={p.mono ? "mono" : undefined}
        value={v[p.f as keyof JobFormValues]}
        disabled={p.disabled}
        autofocus={error?.field === p.f}
        aria-invalid={error?.field === p.f ? "true" : undefined}
        aria-describedby={describedBy(p.f, p.hint ? `${p.f}-hint` : undefined)}
      />
      {p.hint && (
        <p class="hint" id={`${p.f}-hint`}>
          {p.hint}
        </p>
      )}
      <Err f={p.f} />
    </div>
  );
  const Select = (p: { f: Field; label: string; hint: string; options: ReadonlyArray<readonly [string, string]> }) => (
    <div class="field">
      <label for={p.f}>{p.label}</label>
      <select
        id={p.f}
        name={p.f}
        autofocus={error?.field === p.f}
        aria-invalid={error?.field === p.f ? "true" : undefined}
        aria-describedby={describedBy(p.f, `${p.f}-hint`)}
      >
        {p.options.map(([value, words]) => (
          <option value={value} selected={v[p.f as keyof JobFormValues] === value}>
            {words}
          </option>
        ))}
      </select>
      <p class="hint" id={`${p.f}-hint`}>
        {p.hint}
      </p>
      <Err f={p.f} />
    </div>
  );
  const Area = (p: { f: Field; label: string; hint: string; rows?: number }) => (
    <div class="field">
      <label for={p.f}>{p.label}</label>
      <textarea
        id={p.f}
        name={p.f}
        class="mono"
        rows={p.rows ?? 4}
        autofocus={error?.field === p.f}
        aria-invalid={error?.field === p.f ? "true" : undefined}
        aria-describedby={describedBy(p.f, `${p.f}-hint`)}
      >
        {v[p.f as keyof JobFormValues]}
      </textarea>
      <p class="hint" id={`${p.f}-hint`}>
        {p.hint}
      </p>
      <Err f={p.f} />
    </div>
  );
  return (
    <>
      <h1>{job ? `Edit ${job.name}` : "New job"}</h1>
      {job && <p class="sub mono">{job.id}</p>}
      {error && error.field === null && (
        <p class="flash err" role="alert" id="form-error">
          {error.message}
        </p>
      )}
      <PostForm action={action} csrf={c.var.csrf} label={job ? "Edit job" : "New job"} class="job-form">
        <fieldset class="card">
          <legend>Job</legend>
          <Text f="name" label="Name" />
          <Text
            f="type"
            label="Type"
            mono
            disabled={job !== null}
            hint={
              job
                ? "A job's type cannot be changed."
                : "webhook for an HTTP request; a handler's type (with no URL) for a worker."
            }
          />
        </fieldset>
        <fieldset class="card">
          <legend>Schedule</legend>
          <fieldset class="checks">
            <legend>Kind</legend>
            <label>
              <input type="radio" name="kind" value="cron" checked={v.kind === "cron"} /> Repeating (cron)
            </label>
            <label>
              <input type="radio" name="kind" value="once" checked={v.kind === "once"} /> Once
            </label>
          </fieldset>
          <Text
            f="cron"
            label="Cron expression"
            mono
            hint="5 fields (minute hour day month weekday), or 6 with seconds first, e.g. 0 9 * * 1-5."
          />
          <Text f="timezone" label="Time zone" hint="An IANA name, e.g. Europe/Berlin." />
          <div
            class="preview"
            id="schedule-preview"
            aria-live="polite"
            data-preview={`${base}/jobs/preview`}
            data-initial={p.error ? "error" : "ok"}
          >
            {p.error ? (
              <p class="muted">{p.error}</p>
            ) : (
              <>
                <p>
                  <strong>{p.words}</strong>
                </p>
                <ol class="fires">
                  {p.fires.map((f) => (
                    <li>
                      <When d={f} />
                    </li>
                  ))}
                </ol>
              </>
            )}
          </div>
          <Text
            f="spread"
            label="Spread (cron)"
            mono
            hint="An ISO 8601 duration, e.g. PT10M: the job fires at its own fixed offset within that window after each cron time; empty: at the cron time."
          />
          <div class="grid tight">
            <Select
              f="overlap"
              label="Overlap (cron)"
              hint="When a fire is due while the last one still runs."
              options={OVERLAPS.map((o) => [o, OVERLAP_WORDS[o]] as const)}
            />
            <Select
              f="misfire"
              label="Misfire (cron)"
              hint="Fires missed by downtime or a pause, past the 60 s grace."
              options={MISFIRES.map((o) => [o, MISFIRE_WORDS[o]] as const)}
            />
          </div>
          <Text
            f="at"
            label="Run once at"
            mono
            hint="For Once: an ISO-8601 instant with its zone, e.g. 2030-01-01T09:00:00Z; empty runs it now."
          />
          <div class="grid tight">
            <Text
              f="debounceKey"
              label="Debounce key (once)"
              mono
              disabled={job !== null}
              hint={
                job
                  ? "Set by the create that made the job; it cannot be changed."
                  : "Creates with this key fold into one pending job, e.g. account-42; empty: none."
              }
            />
            <Text
              f="debouncePeriodMs"
              label="Quiet period (ms)"
              disabled={job !== null}
              hint="Fires this long after the latest create."
            />
            <Text
              f="debounceMaxWaitMs"
              label="Longest wait (ms)"
              disabled={job !== null}
              hint="At most this long after the first create; empty: no cap."
            />
          </div>
        </fieldset>
        <fieldset class="card">
          <legend>Target</legend>
          <Text f="url" label="URL" mono hint="Leave empty for a handler job. ${secrets.NAME} names a secret." />
          <div class="field">
            <label for="method">Method</label>
            <select id="method" name="method">
              {METHODS.map((m) => (
                <option value={m} selected={v.method === m}>
                  {m}
                </option>
              ))}
            </select>
            <Err f="method" />
          </div>
          <Area
            f="headers"
            label="Headers"
            hint={`One per line, Name: value. Put credentials in a secret: authorization: Bearer \${secrets.API_KEY}. A value shown as ${KEPT} is kept.`}
          />
          <Area f="body" label="Body" hint="JSON or plain text, sent as it is; empty sends Fairway's envelope." />
        </fieldset>
        <fieldset class="card">
          <legend>Payload, retries and fairness</legend>
          <Area f="payload" label="Payload (JSON)" hint='Carried in the envelope, e.g. {"report": "daily"}.' />
          <div class="grid tight">
            <Text f="maxAttempts" label="Attempts" type="text" hint="1-100; empty: the pool's default." />
            <Text f="initialDelayMs" label="First retry after (ms)" />
            <Text f="maxDelayMs" label="Longest retry delay (ms)" />
            <Text f="timeoutMs" label="Timeout (ms)" hint="100-900000; empty: the pool's default." />
          </div>
          <Text f="key" label="Fairness key" mono hint="Shares and limits inside the tenant, e.g. customer-42." />
          <Select
            f="onBusy"
            label="While the key is busy (onBusy)"
            hint="What a due trigger does while its key is at its cap; anything but queue needs a key."
            options={ON_BUSY.map((o) => [o, ON_BUSY_WORDS[o]] as const)}
          />
          <div class="field">
            <label for="notify">Notify</label>
            <select id="notify" name="notify" aria-describedby="channels-hint">
              <option value="all" selected={v.notify === "all"}>
                Every channel of the tenant
              </option>
              <option value="none" selected={v.notify === "none"}>
                No channel
              </option>
              <option value="channels" selected={v.notify === "channels"}>
                These channels
              </option>
            </select>
          </div>
          <Text f="channels" label="Channel ids" mono hint="For These channels: ids separated by commas." />
        </fieldset>
        <div class="actions">
          <button type="submit">{job ? "Save job" : "Create job"}</button>
          <a class="button secondary" href={job ? `${base}/jobs/${encodeURIComponent(job.id)}` : `${base}/jobs`}>
            Back
          </a>
        </div>
      </PostForm>
      <script src="/dashboard/assets/job-form.js" defer></script>
    </>
  );
}
