// Run one claimed trigger: a signed webhook (Standard Webhooks) or an in-process handler. Expected
// outcomes are values: this never throws; the attempt's record stores what it returns.
import {
  BoundedMap,
  checkTargetUrl,
  parseRetryAfter,
  redactSecretFragments,
  signWebhook,
  signWebhookSync,
  substituteSecrets,
  targetSecretRefs,
  type AttemptRequest,
  type DeliveryResult,
} from "@fairway/core";
import type { ClaimedTrigger } from "@fairway/store";
import type { RunAbort, Transport } from "./transport.ts";
import { AttemptLog, forwardedTrace, type AttemptSpan } from "./trace.ts";
import { bodyOf, methodOf, truncateRecorded, userHeaders } from "./webhook-request.ts";

export interface HandlerContext {
  triggerId: string;
  jobId: string;
  tenantId: string;
  jobName: string;
  scheduledFor: Date;
  attempt: number;
  payload: unknown;
  signal: AbortSignal;
  /** The attempt's W3C trace context (its span when tracing is on, else the job's create-time one);
   *  null: none. A handler worker runs the handler inside it (worker create-worker.ts). */
  traceparent: string | null;
  tracestate: string | null;
  /** A line for the attempt's record (GET /v1/triggers/:id): arguments joined by spaces, objects as
   *  JSON, at most ATTEMPT_LOG_MAX bytes per attempt (the cut is said). */
  log(...args: unknown[]): void;
}
/** An in-process handler for a pool type. Resolve = success; throw = a retryable failure. */
export type Handler = (ctx: HandlerContext) => Promise<unknown> | unknown;

/** A tenant's secrets by name, decrypted; `missing` lists the names it does not have. */
export type SecretResolver = (
  tenantId: string,
  names: string[],
) => Promise<{ values: Map<string, string>; missing: string[] }>;

export interface RunDeps {
  transport: Transport;
  handlers: Record<string, Handler>;
  allowPrivateTargets: boolean;
  now: () => number;
  /** Decrypts the secrets a target names; absent when no FAIRWAY_SECRETS_KEY is configured. */
  secrets?: SecretResolver;
  /** Response bytes kept per pool (its maxResponseBytes). */
  maxResponseBytes?: (type: string) => number;
}

/** `abort` is the run's cancellation (its timeout or stop()); a handler sees it as `ctx.signal`.
 *  `span`: the attempt's spans when tracing is on (trace.ts). */
export async function runTrigger(
  t: ClaimedTrigger,
  abort: RunAbort,
  deps: RunDeps,
  span: AttemptSpan | null = null,
): Promise<DeliveryResult> {
  const started = performance.now();
  const trace = span ?? forwardedTrace(t);
  let logs: AttemptLog | null = null;
  let r: DeliveryResult;
  try {
    if (t.target) r = await deliverWebhook(t, abort, deps, trace);
    else {
      const handler = deps.handlers[t.type];
      if (!handler) r = fail("handler_error", `no handler registered for type "${t.type}"`);
      else {
        await handler({
          triggerId: t.id,
          jobId: t.jobId,
          tenantId: t.tenantId,
          jobName: t.jobName,
          scheduledFor: t.scheduledFor,
          attempt: t.attempt,
          payload: t.payload,
          // An AbortSignal is made only for a handler that looks at it.
          get signal() {
            return abort.signal;
          },
          traceparent: trace?.traceparent ?? null,
          tracestate: trace?.tracestate ?? null,
          // Made on the first line: most handlers write none.
          log: (...args: unknown[]) => (logs ??= new AttemptLog()).add(args),
        });
        r = answer("success", null, null, null, null);
      }
    }
  } catch (err) {
    const status = (err as { httpStatus?: unknown } | null)?.httpStatus;
    r = abort.aborted
      ? abortedRun(abort)
      : typeof status === "number" && !t.target
        ? // A handler that got an HTTP answer says so (notify.ts): the status decides, as for a webhook.
          answer("http_error", status, errorText(err), null, null)
        : fail(t.target ? "network_error" : "handler_error", errorText(err));
  }
  r.durationMs = performance.now() - started;
  // Assigned by the handler's ctx.log, which the compiler does not follow.
  const kept = logs as AttemptLog | null;
  if (kept) r.logs = { lines: kept.lines, truncated: kept.truncated };
  return r;
}

async function deliverWebhook(
  t: ClaimedTrigger,
  signal: RunAbort,
  deps: RunDeps,
  trace: { traceparent: string; tracestate: string | null } | null,
): Promise<DeliveryResult> {
  const target = t.target!;
  let values: Map<string, string> | null = null;
  if (mayReferSecrets(target)) {
    const names = targetSecretRefs(target);
    if (names.size > 0) {
      if (!deps.secrets)
        return fail("secret_missing", "this executor has no secrets store (FAIRWAY_SECRETS_KEY is not set)");
      const found = await deps.secrets(t.tenantId, [...names]);
      if (found.missing.length > 0) {
        const list = found.missing.join(", ");
        return fail(
          "secret_missing",
          `secret ${list} does not exist (deleted after the job was saved): PUT /v1/secrets/${found.missing[0]}, then replay this trigger`,
        );
      }
      values = found.values;
    }
  }
  const url = values ? substituteSecrets(target.url, values) : target.url;
  // Checked again at delivery time: the rules (or the job, or a secret in the URL) may have changed.
  const checked = checkTarget(url, deps.allowPrivateTargets);
  // When a secret went into the URL, its host is secret too: errors about it are redacted by parts.
  const secretUrl = values && url !== target.url ? url : undefined;
  if (checked.href === null) {
    const message = values ? redactSecretFragments(checked.message, values, secretUrl) : checked.message;
    return checked.forbidden ? fail("forbidden_target", `${message}${FLAG_HINT}`) : fail("network_error", message);
  }
  const method = methodOf(t);
  const body = bodyOf(t, values);
  const own = userHeaders(t, values);
  const timestampSec = Math.floor(deps.now() / 1000);
  const toSign = { secrets: t.secrets, id: t.id, timestampSec, body: body?.sent ?? "" };
  const signature = signWebhookSync(toSign) ?? (await signWebhook(toSign));
  const ours: Record<string, string> = {
    "user-agent": "Fairway-Webhooks/1",
    "webhook-id": t.id,
    "webhook-timestamp": String(timestampSec),
    "webhook-signature": signature,
    "fairway-attempt": String(t.attempt),
  };
  // Not signed (the signature covers id, timestamp and body): the receiver's tracing continues here.
  if (trace) {
    ours.traceparent = trace.traceparent;
    if (trace.tracestate) ours.tracestate = trace.tracestate;
  }
  if (body && !own.contentType) ours["content-type"] = body.contentType;
  const headers = target.headers ? { ...own.headers, ...ours } : ours;
  const request = recordRequest(method, target, headers, body?.recorded ?? null, values);
  let res;
  try {
    res = await deps.transport({
      url: checked.href,
      method,
      headers,
      body: body?.sent ?? null,
      signal,
      maxResponseBytes: deps.maxResponseBytes?.(t.type),
    });
  } catch (err) {
    const r = signal.aborted
      ? abortedRun(signal)
      : isForbiddenAddress(err)
        ? fail("forbidden_target", `${errorText(err)}${FLAG_HINT}`)
        : fail("network_error", errorText(err));
    if (values && r.error) r.error = redactSecretFragments(r.error, values, secretUrl);
    r.request = request;
    return r;
  }
  const responseBody = values ? redactSecretFragments(res.body, values) : res.body;
  let r: DeliveryResult;
  if (res.status >= 200 && res.status < 300) r = answer("success", res.status, null, responseBody || null, null);
  // Retry-After matters only to a failed attempt's retry.
  else
    r = answer(
      "http_error",
      res.status,
      `HTTP ${res.status}`,
      responseBody || null,
      parseRetryAfter(res.header("retry-after"), deps.now()),
    );
  r.request = request;
  r.responseHeaders = values ? redactHeaders(res.headers(), values) : res.headers();
  r.responseTruncated = res.truncated;
  return r;
}

/** Cheap test first: most targets name no secret, and their delivery should not walk the body. */
function mayReferSecrets(target: NonNullable<ClaimedTrigger["target"]>): boolean {
  if (target.url.includes("${secrets.") || target.body !== undefined) return true;
  if (target.headers) for (const v of Object.values(target.headers)) if (v.includes("${secrets.")) return true;
  return false;
}

/** The request as the history keeps it: the target's own URL and header values (placeholders, not
 *  values), Fairway's headers as sent, the body with placeholders, cut at its bound. */
function recordRequest(
  method: string,
  target: NonNullable<ClaimedTrigger["target"]>,
  sent: Record<string, string>,
  body: string | null,
  values: Map<string, string> | null,
): AttemptRequest {
  const headers = values && target.headers ? { ...sent, ...target.headers } : sent;
  const cut = truncateRecorded(body);
  const r: AttemptRequest = { method, url: target.url, headers, body: cut.body };
  if (cut.truncated) r.truncated = true;
  return r;
}

/** What a target answers may echo a secret in part (a cookie, a location with it percent-encoded):
 *  header values are redacted as the body is, by fragments. */
function redactHeaders(h: Record<string, string>, values: Map<string, string>): Record<string, string> {
  for (const k of Object.keys(h)) h[k] = redactSecretFragments(h[k], values);
  return h;
}

/** A result (durationMs is set by runTrigger); every result has this one shape. */
function answer(
  outcome: DeliveryResult["outcome"],
  httpStatus: number | null,
  error: string | null,
  responseBody: string | null,
  retryAfterMs: number | null,
): DeliveryResult {
  return {
    outcome,
    httpStatus,
    durationMs: 0,
    error,
    responseBody,
    retryAfterMs,
    request: null,
    responseHeaders: null,
    responseTruncated: false,
    logs: null,
  };
}

/** A run cut by its abort: a timeout, or a cancel (its user's, or for a newer trigger of its key). */
function abortedRun(abort: RunAbort): DeliveryResult {
  return abort.reason === "cancel"
    ? fail("cancelled", "cancelled: a newer trigger of its key replaced it (onBusy cancel_running)")
    : fail("timeout", "timed out");
}

function fail(outcome: DeliveryResult["outcome"], error: string): DeliveryResult {
  return answer(outcome, null, error, null, null);
}

/** checkTargetUrl, remembered per URL: it is a pure function of the URL and allowPrivate, and parsing
 *  the URL on every delivery to the same target is wasted. Bounded like the signing key caches. */
const CHECKED_MAX = 1000;
const checkedTargets = [new BoundedMap<string, Checked>(CHECKED_MAX), new BoundedMap<string, Checked>(CHECKED_MAX)];
type Checked = { href: string; message: null; forbidden: false } | { href: null; message: string; forbidden: boolean };

function checkTarget(url: string, allowPrivate: boolean): Checked {
  return checkedTargets[allowPrivate ? 1 : 0].getOrSet(url, () => {
    const r = checkTargetUrl(url, { allowPrivate });
    return r.ok
      ? { href: r.url.toString(), message: null, forbidden: false }
      : { href: null, message: r.message, forbidden: r.code === "forbidden_target" };
  });
}

/** What the create-time check says too: the rule can change after a job was saved (a restart without
 *  the flag), and then no retry can succeed, so the attempt is final and says how to change it. */
const FLAG_HINT =
  "; use a public address, or for local testing start the server with FAIRWAY_ALLOW_PRIVATE_TARGETS=true";

/** The transport's refusal of a private address at connect time (undici-transport.ts, EFORBIDDEN). */
function isForbiddenAddress(err: unknown): boolean {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  return e?.code === "EFORBIDDEN" || e?.cause?.code === "EFORBIDDEN";
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: string }).code;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return [code, err.message, cause?.code].filter(Boolean).join(": ").slice(0, 500);
  }
  return String(err).slice(0, 500);
}
