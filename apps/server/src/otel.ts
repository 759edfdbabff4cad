// OpenTelemetry tracing of the server (docs/observability.md): the API's server spans, a create's
// producer span (its context kept with the job), each attempt's span (a webhook's a client span, its
// traceparent on the request; a handler's a consumer span) and its settle. Loaded by tracing.ts with a
// dynamic import only when an OTLP endpoint is configured: without one none of these modules is read.
//
// No attribute carries a secret: URLs are the target's as saved (secrets as placeholders), with
// placeholders, userinfo and every query value replaced by REDACTED; no header, body, payload or
// error text is exported.
import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from "@opentelemetry/semantic-conventions";
import { matchedRoutes } from "hono/route";
import {
  formatTraceparent,
  loggablePath,
  parseTraceparent,
  triggerTraceParent,
  type DeliveryResult,
} from "@fairway/core";
import type { ApiTracing } from "@fairway/api";
import type { AttemptSpan, AttemptTracer } from "@fairway/executor";
import type { ClaimedTrigger, Settled, Settlement } from "@fairway/store";
import type { ServerTracing, TracingSettings } from "./tracing-types.ts";

// Messaging semantic conventions (incubating names, written out: the package exports them only from
// its incubating entry point).
const MESSAGING_SYSTEM = "messaging.system";
const MESSAGING_OPERATION_TYPE = "messaging.operation.type";
const MESSAGING_OPERATION_NAME = "messaging.operation.name";
const MESSAGING_DESTINATION_NAME = "messaging.destination.name";
const MESSAGING_MESSAGE_ID = "messaging.message.id";

/** Settle spans waiting for their settle to land: a settle refused by its fence never does, and the
 *  oldest are ended (fairway.settle.landed false) past this many. */
const PENDING_SETTLES_MAX = 10_000;

export async function startOtel(s: TracingSettings): Promise<ServerTracing> {
  const exporter: SpanExporter =
    s.protocol === "http/json"
      ? new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter({
          url: s.url,
          headers: s.headers,
        })
      : new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter({
          url: s.url,
          headers: s.headers,
        });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: s.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: s.exportDelayMs })],
  });
  // Global: handlers run in this process (startServer's handlers) see the attempt's context, and the
  // request's context reaches the create command through AsyncLocalStorage.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  const tracer = provider.getTracer("fairway");
  const propagator = new W3CTraceContextPropagator();
  const pendingSettles = new Map<string, Span>();

  const api: ApiTracing = {
    request: async (c, next) => {
      const parent = propagator.extract(ROOT_CONTEXT, c.req.raw.headers, headerGetter);
      const method = c.req.method;
      const span = tracer.startSpan(
        method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            [ATTR_HTTP_REQUEST_METHOD]: method,
            [ATTR_URL_PATH]: loggablePath(c.req.path),
            [ATTR_URL_SCHEME]: new URL(c.req.url).protocol.replace(":", ""),
          },
        },
        parent,
      );
      try {
        await context.with(trace.setSpan(parent, span), next);
      } finally {
        const route = matchedRoutes(c).findLast((r) => r.method !== "ALL")?.path;
        if (route) {
          span.setAttribute(ATTR_HTTP_ROUTE, route);
          span.updateName(`${method} ${route}`);
        }
        const status = c.res.status;
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        const tenant = c.get("tenant");
        if (tenant) span.setAttribute("fairway.tenant.id", tenant.id);
        if (status >= 500) {
          span.setAttribute(ATTR_ERROR_TYPE, String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      }
    },
    jobCreate({ tenantId, type, key }) {
      const attributes: Attributes = {
        [MESSAGING_SYSTEM]: "fairway",
        [MESSAGING_OPERATION_TYPE]: "send",
        [MESSAGING_OPERATION_NAME]: "create",
        [MESSAGING_DESTINATION_NAME]: type,
        "fairway.tenant.id": tenantId,
        "fairway.pool": type,
      };
      if (key !== null) attributes["fairway.key"] = key;
      const span = tracer.startSpan(`create ${type}`, { kind: SpanKind.PRODUCER, attributes }, context.active());
      const sc = span.spanContext();
      return {
        traceparent: traceparentOf(sc),
        tracestate: sc.traceState?.serialize() || null,
        end(jobId, error) {
          if (jobId) span.setAttribute("fairway.job.id", jobId);
          if (error) {
            span.setAttribute(ATTR_ERROR_TYPE, error);
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
        },
      };
    },
  };

  const executor: AttemptTracer = {
    start(t, startedAt) {
      const parent = triggerContext(t);
      const attributes = attemptAttributes(t, startedAt);
      const links: Link[] = [];
      // A cron fire's own trace links to the create that made its job.
      const job = t.trace && !t.trace.join ? parseTraceparent(t.trace.parent) : null;
      if (job) links.push({ context: { traceId: job.traceId, spanId: job.spanId, traceFlags: 1, isRemote: true } });
      let name = `process ${t.type}`;
      let kind: SpanKind = SpanKind.CONSUMER;
      if (t.target) {
        const method = t.target.method ?? "POST";
        name = method;
        kind = SpanKind.CLIENT;
        attributes[ATTR_HTTP_REQUEST_METHOD] = method;
        const url = redactedUrl(t.target.url);
        if (url) {
          attributes[ATTR_URL_FULL] = url.href;
          attributes[ATTR_SERVER_ADDRESS] = url.hostname;
          attributes[ATTR_SERVER_PORT] = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
        }
      }
      const span = tracer.startSpan(name, { kind, attributes, links, startTime: startedAt }, parent);
      const sc = span.spanContext();
      const attempt: AttemptSpan = {
        traceparent: traceparentOf(sc),
        tracestate: sc.traceState?.serialize() || null,
        end(r: DeliveryResult, s: Settlement | null) {
          if (r.httpStatus !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, r.httpStatus);
          span.setAttribute("fairway.attempt.outcome", r.outcome);
          if (r.outcome !== "success") {
            span.setAttribute(ATTR_ERROR_TYPE, r.httpStatus !== null ? String(r.httpStatus) : r.outcome);
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          if (s) span.setAttribute("fairway.attempt.status", s.status);
          span.end(startedAt + r.durationMs);
          if (!s) return;
          const settle = tracer.startSpan(
            "settle",
            {
              kind: SpanKind.INTERNAL,
              attributes: {
                [MESSAGING_SYSTEM]: "fairway",
                [MESSAGING_OPERATION_TYPE]: "settle",
                [MESSAGING_OPERATION_NAME]: "settle",
                "fairway.tenant.id": t.tenantId,
                "fairway.job.id": t.jobId,
                "fairway.trigger.id": t.id,
                "fairway.attempt": t.attempt,
                "fairway.settle.status": s.status,
              },
            },
            trace.setSpan(parent, span),
          );
          pendingSettles.get(t.id)?.end();
          pendingSettles.set(t.id, settle);
          if (pendingSettles.size > PENDING_SETTLES_MAX) {
            const [id, oldest] = pendingSettles.entries().next().value as [string, Span];
            oldest.setAttribute("fairway.settle.landed", false);
            oldest.end();
            pendingSettles.delete(id);
          }
        },
      };
      return attempt;
    },
    settled(rows: Settled[]) {
      for (const r of rows) {
        const span = pendingSettles.get(r.id);
        if (!span) continue;
        pendingSettles.delete(r.id);
        span.setAttribute("fairway.settle.landed", true);
        span.end();
      }
    },
  };

  return {
    api,
    executor,
    async shutdown() {
      for (const span of pendingSettles.values()) span.end();
      pendingSettles.clear();
      await provider.shutdown();
    },
  };
}

const headerGetter = {
  get: (h: Headers, key: string) => h.get(key) ?? undefined,
  keys: (h: Headers) => {
    const names: string[] = [];
    h.forEach((_, name) => {
      names.push(name);
    });
    return names;
  },
};

function traceparentOf(sc: SpanContext): string {
  return formatTraceparent(sc.traceId, sc.spanId, (sc.traceFlags & 1) === 1);
}

/** The context an attempt's span is a child of (core triggerTraceParent): its one-time job's create,
 *  or its trigger's own trace. Every attempt of a trigger has the same parent: retries are siblings. */
function triggerContext(t: ClaimedTrigger): Context {
  const p = triggerTraceParent(t.id, t.trace);
  const state = !p.own && t.trace?.state ? createTraceState(t.trace.state) : undefined;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: p.traceId,
    spanId: p.spanId,
    traceFlags: p.sampled ? 1 : 0,
    isRemote: true,
    traceState: state,
  });
}

function attemptAttributes(t: ClaimedTrigger, startedAt: number): Attributes {
  const a: Attributes = {
    [MESSAGING_SYSTEM]: "fairway",
    [MESSAGING_OPERATION_TYPE]: "process",
    [MESSAGING_OPERATION_NAME]: "process",
    [MESSAGING_DESTINATION_NAME]: t.type,
    [MESSAGING_MESSAGE_ID]: t.id,
    "fairway.tenant.id": t.tenantId,
    "fairway.job.id": t.jobId,
    "fairway.trigger.id": t.id,
    "fairway.attempt": t.attempt,
    "fairway.pool": t.type,
    // The trigger's wait between its due instant and this start (a retry's includes its backoff).
    "fairway.trigger.lag_ms": Math.max(0, startedAt - t.scheduledFor.getTime()),
  };
  if (t.key !== null) a["fairway.key"] = t.key;
  return a;
}

const PLACEHOLDER = /\$\{secrets\.[^}]*\}/g;

/** A target URL as spans may show it: secret placeholders, userinfo and query values REDACTED (the
 *  HTTP semantic conventions' url.full redaction); null when what is left is not a URL. */
function redactedUrl(raw: string): URL | null {
  let url: URL;
  try {
    url = new URL(raw.replace(PLACEHOLDER, "REDACTED"));
  } catch {
    return null;
  }
  if (url.username) url.username = "REDACTED";
  if (url.password) url.password = "REDACTED";
  if (url.search) {
    const q = new URLSearchParams();
    for (const k of new URLSearchParams(url.search).keys()) q.append(k, "REDACTED");
    url.search = q.toString();
  }
  url.hash = "";
  return url;
}
