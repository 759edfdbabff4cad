// The job form's text fields and the API's job body: a job as the form shows it, and the form as the
// API-shaped body (or merge patch) the command layer checks. Only the shape is made here (numbers from
// digits, JSON from text); every rule and message is the API's, so a form refused here names its field
// the way the API would.
import { formatSpread } from "@fairway/core";
import type { DebounceState, JobRow } from "@fairway/store";
import { shownHeaderValue } from "./tenant-shell.tsx";

export const METHODS = ["POST", "PUT", "PATCH", "DELETE", "GET", "HEAD"] as const;
/** The API's choices, the first being its default (docs/schedules.md, docs/fairness.md). */
export const OVERLAPS = ["allow", "skip", "buffer_one"] as const;
export const MISFIRES = ["fire_once", "skip", "fire_all"] as const;
export const ON_BUSY = ["queue", "skip", "replace_queued", "cancel_running"] as const;

/** Shown in place of a header value that is a literal credential: never sent back to the page; a line
 *  still reading this keeps the stored value. */
export const KEPT = "(hidden, kept unchanged)";

export interface JobFormValues {
  name: string;
  type: string;
  kind: "cron" | "once";
  cron: string;
  timezone: string;
  at: string;
  url: string;
  method: string;
  headers: string;
  body: string;
  payload: string;
  maxAttempts: string;
  initialDelayMs: string;
  maxDelayMs: string;
  timeoutMs: string;
  key: string;
  notify: "all" | "none" | "channels";
  channels: string;
  /** A cron job's spread window, an ISO 8601 duration ("PT10M"); empty: none. */
  spread: string;
  overlap: string;
  misfire: string;
  onBusy: string;
  /** A one-time job's debounce (create only; the API refuses it in a PATCH). Empty key: none. */
  debounceKey: string;
  debouncePeriodMs: string;
  debounceMaxWaitMs: string;
}

/** The form's fields, in the order errors are looked for; each is an input id on the form. */
const FIELDS = [
  "name",
  "type",
  "cron",
  "timezone",
  "at",
  "url",
  "method",
  "headers",
  "body",
  "payload",
  "maxAttempts",
  "initialDelayMs",
  "maxDelayMs",
  "timeoutMs",
  "key",
  "channels",
  "spread",
  "overlap",
  "misfire",
  "onBusy",
  "debounceKey",
  "debouncePeriodMs",
  "debounceMaxWaitMs",
] as const;
export type Field = (typeof FIELDS)[number];

export const EMPTY_FORM: JobFormValues = {
  name: "",
  type: "webhook",
  kind: "cron",
  cron: "",
  timezone: "UTC",
  at: "",
  url: "",
  method: "POST",
  headers: "",
  body: "",
  payload: "",
  maxAttempts: "",
  initialDelayMs: "",
  maxDelayMs: "",
  timeoutMs: "",
  key: "",
  notify: "all",
  channels: "",
  spread: "",
  overlap: "allow",
  misfire: "fire_once",
  onBusy: "queue",
  debounceKey: "",
  debouncePeriodMs: "",
  debounceMaxWaitMs: "",
};

type Target = { url: string; method?: string; headers?: Record<string, string>; body?: unknown };

const jsonText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

/** A stored job as the form shows it; literal credentials in headers are replaced by KEPT. */
export function valuesOfJob(job: JobRow): JobFormValues {
  const target = job.target as Target | null;
  const notify = job.notify as false | { channels: string[] } | null;
  const debounce = job.debounce as DebounceState | null;
  return {
    name: job.name,
    type: job.type,
    kind: job.cron ? "cron" : "once",
    cron: job.cron ?? "",
    timezone: job.timezone ?? "UTC",
    at: job.runAt && !job.cron ? job.runAt.toISOString() : "",
    url: target?.url ?? "",
    method: target?.method ?? "POST",
    headers: Object.entries(target?.headers ?? {})
      .map(([k, v]) => `${k}: ${shownHeaderValue(k, v) === v ? v : KEPT}`)
      .join("\n"),
    body: target?.body === undefined ? "" : jsonText(target.body),
    payload: job.payload === null || job.payload === undefined ? "" : jsonText(job.payload),
    maxAttempts: String(job.maxAttempts),
    initialDelayMs: String(job.initialDelayMs),
    maxDelayMs: String(job.maxDelayMs),
    timeoutMs: job.timeoutMs === null ? "" : String(job.timeoutMs),
    key: job.key ?? "",
    notify: notify === false ? "none" : notify ? "channels" : "all",
    channels: notify ? notify.channels.join(", ") : "",
    spread: job.cron && job.spreadMs ? formatSpread(job.spreadMs) : "",
    overlap: job.overlap,
    misfire: job.misfire,
    onBusy: job.onBusy,
    debounceKey: debounce?.key ?? "",
    debouncePeriodMs: debounce ? String(debounce.periodMs) : "",
    debounceMaxWaitMs: debounce?.maxWaitMs == null ? "" : String(debounce.maxWaitMs),
  };
}

/** The posted form's text, with anything missing or unexpected as the empty form's. */
export function valuesOfForm(form: Record<string, unknown>): JobFormValues {
  const out = { ...EMPTY_FORM };
  for (const k of Object.keys(EMPTY_FORM) as Array<keyof JobFormValues>) {
    const v = form[k];
    if (typeof v === "string") (out as Record<string, string>)[k] = v.slice(0, 20_000);
  }
  if (out.kind !== "once") out.kind = "cron";
  if (out.notify !== "none" && out.notify !== "channels") out.notify = "all";
  return out;
}

export class FormRefusal extends Error {
  constructor(
    readonly field: Field | null,
    message: string,
  ) {
    super(message);
  }
}

/** Digits become a number; anything else is passed as typed, for the API's check to refuse by name. */
const num = (s: string): unknown => (/^-?\d+(\.\d+)?$/.test(s.trim()) ? Number(s.trim()) : s.trim());

/** JSON text; `text` (a target body) may also be plain text, sent as it is. */
function parseJson(s: string, field: Field, plainText: boolean): unknown {
  const t = s.trim();
  if (plainText && !/^[[{"]/.test(t)) return s;
  try {
    return JSON.parse(t);
  } catch {
    if (plainText) return s;
    throw new FormRefusal(field, `${field}: must be JSON, e.g. {"n": 1} (or leave it empty)`);
  }
}

function parseHeaders(text: string, kept: Record<string, string>): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    const i = line.indexOf(":");
    if (i <= 0)
      throw new FormRefusal("headers", `target.headers: write one header per line as Name: value, e.g. x-team: ops`);
    const name = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    if (value === KEPT) {
      const was = kept[name.toLowerCase()];
      if (was === undefined)
        throw new FormRefusal("headers", `target.headers: ${name} has no stored value to keep; type its value`);
      out[name] = was;
    } else out[name] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The stored headers by lower-case name: what a KEPT line stands for. */
export function keptHeaders(job: JobRow | null): Record<string, string> {
  const h = (job?.target as Target | null)?.headers ?? {};
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

/** The form as the API's create body. Throws FormRefusal for text that is not the shape it names. */
export function bodyOfValues(v: JobFormValues, kept: Record<string, string> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = { name: v.name.trim(), type: v.type.trim() || "webhook" };
  body.schedule =
    v.kind === "cron"
      ? {
          cron: v.cron.trim(),
          timezone: v.timezone.trim() || "UTC",
          ...(v.spread.trim() ? { spread: v.spread.trim() } : {}),
        }
      : v.at.trim()
        ? { at: v.at.trim() }
        : { delayMs: 0 };
  if (v.url.trim()) {
    const target: Target = { url: v.url.trim(), method: v.method };
    const headers = parseHeaders(v.headers, kept);
    if (headers) target.headers = headers;
    if (v.body.trim()) target.body = parseJson(v.body, "body", true);
    body.target = target;
  } else if (v.headers.trim() || v.body.trim()) {
    throw new FormRefusal("url", "target.url: headers and a body need a URL to send them to");
  }
  if (v.payload.trim()) body.payload = parseJson(v.payload, "payload", false);
  const retry: Record<string, unknown> = {};
  for (const k of ["maxAttempts", "initialDelayMs", "maxDelayMs"] as const) if (v[k].trim()) retry[k] = num(v[k]);
  if (Object.keys(retry).length > 0) body.retry = retry;
  if (v.timeoutMs.trim()) body.timeoutMs = num(v.timeoutMs);
  if (v.key !== "") body.key = v.key;
  if (v.notify === "none") body.notify = false;
  if (v.notify === "channels") body.notify = { channels: v.channels.split(/[\s,]+/).filter(Boolean) };
  // Policies as chosen; a default is left out, so a create says only what differs (onBusy other than
  // queue needs a key, which the API says).
  if (v.overlap && v.overlap !== OVERLAPS[0]) body.overlap = v.overlap;
  if (v.misfire && v.misfire !== MISFIRES[0]) body.misfire = v.misfire;
  if (v.onBusy && v.onBusy !== ON_BUSY[0]) body.onBusy = v.onBusy;
  if (v.kind === "once" && v.debounceKey.trim()) {
    const d: Record<string, unknown> = { key: v.debounceKey.trim(), periodMs: num(v.debouncePeriodMs) };
    if (v.debounceMaxWaitMs.trim()) d.maxWaitMs = num(v.debounceMaxWaitMs);
    body.debounce = d;
  } else if (v.kind === "once" && (v.debouncePeriodMs.trim() || v.debounceMaxWaitMs.trim())) {
    throw new FormRefusal("debounceKey", "debounce.key: give the debounce key the creates fold by, e.g. account-42");
  } else if (v.kind === "cron" && (v.debounceKey.trim() || v.debouncePeriodMs.trim())) {
    throw new FormRefusal(
      "debounceKey",
      "debounce: only goes with a one-time job; choose Once, or clear the debounce fields",
    );
  }
  return body;
}

const POLICY_DEFAULTS: Record<string, string> = { overlap: OVERLAPS[0], misfire: MISFIRES[0], onBusy: ON_BUSY[0] };

/** The merge patch from a job to the form: the top-level fields whose value changed, null for one the
 *  form cleared. An untouched field is left out, so its part of the job is not rewritten. */
export function patchOf(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (k === "type") continue;
    // A default the form left out is a value of its own: the API's default, sent back as it.
    if (!(k in after)) patch[k] = k in POLICY_DEFAULTS ? POLICY_DEFAULTS[k] : null;
    else if (JSON.stringify(before[k]) !== JSON.stringify(after[k])) patch[k] = after[k];
  }
  // A merge patch merges a nested schedule: a spread the form cleared is cleared with null.
  const was = before.schedule as Record<string, unknown> | undefined;
  const now = patch.schedule as Record<string, unknown> | undefined;
  if (now && was && "spread" in was && !("spread" in now) && "cron" in now) patch.schedule = { ...now, spread: null };
  return patch;
}

/** The form field an API message is about, from the path it starts with ("target.url: …"). */
export function fieldOf(message: string): Field | null {
  const path = /^([A-Za-z.]+)[: ]/.exec(message)?.[1] ?? "";
  const last = path.split(".").pop() ?? "";
  if (path.startsWith("schedule"))
    return last === "timezone" ? "timezone" : last === "at" ? "at" : last === "spread" ? "spread" : "cron";
  if (path === "debounce" || path.startsWith("debounce.")) {
    const d = { periodMs: "debouncePeriodMs", maxWaitMs: "debounceMaxWaitMs" } as const;
    return d[last as keyof typeof d] ?? "debounceKey";
  }
  if (path === "notify" || path.startsWith("notify.")) return "channels";
  if (path === "target") return message.includes("secret") ? "headers" : "url";
  return (FIELDS as readonly string[]).includes(last) ? (last as Field) : null;
}
