// Run one claimed trigger: a signed webhook (Standard Webhooks) or an in-process handler. Expected
// outcomes are values: this never throws; the attempt's record stores what it returns.
import { BoundedMap, checkTargetUrl, parseRetryAfter, signWebhook, signWebhookSync, type DeliveryResult } from "@fairway/core";
import type { ClaimedTrigger } from "@fairway/store";
import type { RunAbort, Transport } from "./transport.ts";

export interface HandlerContext {
  triggerId: string;
  jobId: string;
  tenantId: string;
  jobName: string;
  scheduledFor: Date;
  attempt: number;
  payload: unknown;
  signal: AbortSignal;
}
/** An in-process handler for a pool type. Resolve = success; throw = a retryable failure. */
export type Handler = (ctx: HandlerContext) => Promise<unknown> | unknown;

export interface RunDeps {
  transport: Transport;
  handlers: Record<string, Handler>;
  allowPrivateTargets: boolean;
  now: () => number;
}

/** `abort` is the run's cancellation (its timeout or stop()); a handler sees it as `ctx.signal`. */
export async function runTrigger(t: ClaimedTrigger, abort: RunAbort, deps: RunDeps): Promise<DeliveryResult> {
  const started = performance.now();
  let r: DeliveryResult;
  try {
    if (t.target) r = await deliverWebhook(t, abort, deps);
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
        });
        r = answer("success", null, null, null, null);
      }
    }
  } catch (err) {
    r = abort.aborted ? fail("timeout", "timed out") : fail(t.target ? "network_error" : "handler_error", errorText(err));
  }
  r.durationMs = performance.now() - started;
  return r;
}

async function deliverWebhook(t: ClaimedTrigger, signal: RunAbort, deps: RunDeps): Promise<DeliveryResult> {
  const target = t.target!;
  // Checked again at delivery time: the rules (or the job) may have changed since creation.
  const checked = checkTarget(target.url, deps.allowPrivateTargets);
  if (checked.href === null) return fail("network_error", checked.message);
  const body = JSON.stringify({
    id: t.id,
    jobId: t.jobId,
    jobName: t.jobName,
    scheduledFor: t.scheduledFor.toISOString(), // what JSON.stringify makes of the Date, without its toJSON lookup
    attempt: t.attempt,
    payload: t.payload ?? null,
  });
  const timestampSec = Math.floor(deps.now() / 1000);
  const toSign = { secrets: t.secrets, id: t.id, timestampSec, body };
  const signature = signWebhookSync(toSign) ?? (await signWebhook(toSign));
  const ours = {
    "content-type": "application/json",
    "user-agent": "Fairway-Webhooks/1",
    "webhook-id": t.id,
    "webhook-timestamp": String(timestampSec),
    "webhook-signature": signature,
    "fairway-attempt": String(t.attempt),
  };
  const res = await deps.transport({
    url: checked.href,
    method: target.method ?? "POST",
    headers: target.headers ? { ...target.headers, ...ours } : ours,
    body,
    signal,
  });
  if (res.status >= 200 && res.status < 300) return answer("success", res.status, null, res.body || null, null);
  // Retry-After matters only to a failed attempt's retry.
  return answer("http_error", res.status, `HTTP ${res.status}`, res.body || null, parseRetryAfter(res.header("retry-after"), deps.now()));
}

/** A result (durationMs is set by runTrigger); every result has this one shape. */
function answer(
  outcome: DeliveryResult["outcome"],
  httpStatus: number | null,
  error: string | null,
  responseBody: string | null,
  retryAfterMs: number | null,
): DeliveryResult {
  return { outcome, httpStatus, durationMs: 0, error, responseBody, retryAfterMs };
}

function fail(outcome: DeliveryResult["outcome"], error: string): DeliveryResult {
  return answer(outcome, null, error, null, null);
}

/** checkTargetUrl, remembered per URL: it is a pure function of the URL and allowPrivate, and parsing
 *  the URL on every delivery to the same target is wasted. Bounded like the signing key caches. */
const CHECKED_MAX = 1000;
const checkedTargets = [new BoundedMap<string, Checked>(CHECKED_MAX), new BoundedMap<string, Checked>(CHECKED_MAX)];
type Checked = { href: string; message: null } | { href: null; message: string };

function checkTarget(url: string, allowPrivate: boolean): Checked {
  return checkedTargets[allowPrivate ? 1 : 0].getOrSet(url, () => {
    const r = checkTargetUrl(url, { allowPrivate });
    return r.ok ? { href: r.url.toString(), message: null } : { href: null, message: r.message };
  });
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: string }).code;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return [code, err.message, cause?.code].filter(Boolean).join(": ").slice(0, 500);
  }
  return String(err).slice(0, 500);
}
