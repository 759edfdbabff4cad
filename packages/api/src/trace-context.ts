// A create request's W3C trace context, as its job keeps it. A malformed traceparent is ignored, not
// refused: the W3C spec says so, and proxies and SDKs add these headers on their own; a tracestate is
// kept only with a valid traceparent, and a malformed one is dropped (core trace-context.ts).
import { parseTraceparent, parseTracestate } from "@fairway/core";
import type { JobTraceContext } from "./env.ts";

export function traceContextOf(
  traceparent: string | undefined,
  tracestate: string | undefined,
): JobTraceContext | null {
  const p = traceparent === undefined ? null : parseTraceparent(traceparent);
  if (!p) return null;
  return {
    traceparent: `00-${p.traceId}-${p.spanId}-${p.sampled ? "01" : "00"}`,
    tracestate: parseTracestate(tracestate),
  };
}
