// At-most-once delivery, executor side (store sending.ts for phase one). A failed at-most-once attempt is
// retried only when the request provably never reached the target: the name did not resolve, the
// connection was refused, or the address check refused it before connecting. Any other failure may have
// been delivered: a non-2xx answer (it arrived) ends `dead` and can be replayed by hand; no answer at all
// (timeout, reset) ends `unknown`.
import type { DeliveryResult } from "@fairway/core";
import type { Settlement } from "@fairway/store";

const NEVER_REACHED = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EAI_NONAME|not allowed|private|loopback|blocked/i;

function neverReached(r: DeliveryResult): boolean {
  return r.outcome === "network_error" && NEVER_REACHED.test(r.error ?? "");
}

/** The settlement of an at-most-once attempt, from the at-least-once one decideSettlement() made. */
export function atMostOnce(s: Settlement, r: DeliveryResult): Settlement {
  if (s.status !== "pending" || neverReached(r)) return s;
  if (r.outcome === "http_error")
    return { ...s, status: "dead", nextAttemptAt: null, reason: "at_most_once_not_retried" };
  return { ...s, status: "unknown", nextAttemptAt: null, reason: "no_response" };
}
