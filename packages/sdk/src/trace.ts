// The active OpenTelemetry context's W3C headers, without depending on @opentelemetry/api: an app that
// registered an SDK has put the API's globals under this symbol (its context manager and propagator),
// and the propagator writes traceparent and tracestate as it would on any outgoing request. No
// OpenTelemetry in the app, or an API of another major version: no headers.
const OTEL_GLOBAL = Symbol.for("opentelemetry.js.api.1");

interface OtelGlobal {
  context?: { active(): unknown };
  propagation?: {
    inject(
      ctx: unknown,
      carrier: Record<string, string>,
      setter: { set(c: Record<string, string>, k: string, v: string): void },
    ): void;
  };
}

const setter = {
  set(c: Record<string, string>, k: string, v: string) {
    c[k] = v;
  },
};

export function activeTraceHeaders(): Record<string, string> {
  const g = (globalThis as Record<symbol, OtelGlobal | undefined>)[OTEL_GLOBAL];
  if (!g?.context || !g.propagation) return {};
  const carrier: Record<string, string> = {};
  try {
    g.propagation.inject(g.context.active(), carrier, setter);
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  if (carrier.traceparent) out.traceparent = carrier.traceparent;
  if (carrier.traceparent && carrier.tracestate) out.tracestate = carrier.tracestate;
  return out;
}
