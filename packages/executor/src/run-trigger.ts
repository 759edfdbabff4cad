// Run one claimed trigger: a signed webhook (Standard Webhooks) or an in-process handler. Expected
// outcomes are values (STYLE habit 9): this never throws; the attempt row stores what it returns.
import { checkTargetUrl, parseRetryAfter, signWebhook, signWebhookSync, type DeliveryResult } from "@fairway/core";
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
  const result = (r: Omit<DeliveryResult, "durationMs">): DeliveryResult => ({
    ...r,
    durationMs: performance.now() - started,
  });
  const handler = deps.handlers[t.type];
  try {
    if (!t.target) {
      if (!handler) return result(fail("handler_error", `no handler registered for type "${t.type}"`));
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
      return result({ outcome: "success", httpStatus: null, error: null, responseBody: null, retryAfterMs: null });
    }
    return result(await deliverWebhook(t, abort, deps));
  } catch (err) {
    if (abort.aborted) return result(fail("timeout", "timed out"));
    return result(fail(t.target ? "network_error" : "handler_error", errorText(err)));
  }
}

async function deliverWebhook(t: ClaimedTrigger, signal: RunAbort, deps: RunDeps) {
  const target = t.target!;
  // Checked again at delivery time: the rules (or the job) may have changed since creation.
  const checked = checkTargetUrl(target.url, { allowPrivate: deps.allowPrivateTargets });
  if (!checked.ok) return fail("network_error", checked.message);
  const body = JSON.stringify({
    id: t.id,
    jobId: t.jobId,
    jobName: t.jobName,
    scheduledFor: t.scheduledFor,
    attempt: t.attempt,
    payload: t.payload ?? null,
  });
  const timestampSec = Math.floor(deps.now() / 1000);
  const toSign = { secrets: t.secrets, id: t.id, timestampSec, body };
  const signature = signWebhookSync(toSign) ?? (await signWebhook(toSign));
  const res = await deps.transport({
    url: checked.url.toString(),
    method: target.method ?? "POST",
    headers: {
      ...target.headers,
      "content-type": "application/json",
      "user-agent": "Fairway-Webhooks/1",
      "webhook-id": t.id,
      "webhook-timestamp": String(timestampSec),
      "webhook-signature": signature,
      "fairway-attempt": String(t.attempt),
    },
    body,
    signal,
  });
  const ok = res.status >= 200 && res.status < 300;
  return {
    outcome: ok ? ("success" as const) : ("http_error" as const),
    httpStatus: res.status,
    error: ok ? null : `HTTP ${res.status}`,
    responseBody: res.body || null,
    retryAfterMs: parseRetryAfter(res.header("retry-after"), deps.now()),
  };
}

function fail(outcome: DeliveryResult["outcome"], error: string) {
  return { outcome, httpStatus: null, error, responseBody: null, retryAfterMs: null };
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: string }).code;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return [code, err.message, cause?.code].filter(Boolean).join(": ").slice(0, 500);
  }
  return String(err).slice(0, 500);
}
