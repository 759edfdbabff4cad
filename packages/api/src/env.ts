// The app's dependencies and the Hono environment every route and middleware is typed with. Apart from
// app.ts so that route files take their types from here, and nothing that app.ts imports imports it.
import type { FailedAuthLimiter, Logger, SecretsKeyring } from "@fairway/core";
import type { Coordinator } from "@fairway/coord";
import type { Db, TenantRow } from "@fairway/store";
import type { PortalBrand } from "@fairway/core";
import type { MiddlewareHandler } from "hono";
import type { Admission } from "./admission.ts";

/** What the API needs from coordination: request limits, and the hints for executors (wake, and the
 *  ready-tenant index's markReady). */
export type ApiCoordinator = Pick<Coordinator, "limit" | "wake" | "markReady">;

export interface AppDeps {
  db: Db;
  coordinator: ApiCoordinator;
  adminToken: string;
  /** FAIRWAY_ALLOW_PRIVATE_TARGETS: let webhooks reach loopback/private addresses. Default false. */
  allowPrivateTargets: boolean;
  /** Pool types with an in-process handler: their jobs need no target. */
  handlerTypes?: ReadonlySet<string>;
  /** Per-tenant API requests per second; 0 disables. Default 1000. */
  apiRatePerSecond?: number;
  now?: () => number;
  log?: Logger;
  /** Origins allowed to embed a tenant portal view in an iframe (FAIRWAY_PORTAL_ORIGINS). */
  portalOrigins?: string[];
  /** The portal's name and accent colour (FAIRWAY_PORTAL_TITLE, FAIRWAY_PORTAL_ACCENT). */
  portalBrand?: PortalBrand;
  /** FAIRWAY_SECRETS_KEY (and _PREVIOUS): seals tenant secrets. Without it the secrets routes answer 503. */
  secretsKey?: SecretsKeyring;
  /** The process's own metrics in Prometheus text (Node: the prom-client registry), appended to /metrics. */
  metricsText?: () => Promise<string>;
  /** A token that may read /metrics besides the admin token (FAIRWAY_METRICS_TOKEN). */
  metricsToken?: string;
  /** Per-tenant series on /metrics: the busiest this many tenants. Default 20. */
  metricsTopTenants?: number;
  /** Why email notification channels cannot be created here (neither SMTP nor an HTTP mail API is
   *  configured); absent when they can. */
  emailUnavailable?: string;
  /** Failed credentials per client address (every route: API tokens, dashboard sign-in, portal
   *  links). Default 20 a minute per address. */
  failedAuth?: FailedAuthLimiter;
  /** This process's executor for /readyz: why it is not ready (its loops made no progress), or null
   *  when it is. Absent where the process runs no executor. */
  executorReadiness?: () => string | null;
  /** The connection /healthz and /readyz ask the database on, apart from the pool tenants' requests
   *  hold (the Node server's own; default `db`), so a probe never waits for a tenant's connection. */
  probeDb?: Db;
  /** Tenant-fair admission of tenant requests (admission.ts; FAIRWAY_API_ADMISSION). Default null:
   *  off. */
  admission?: Admission | null;
  /** OpenTelemetry spans of API requests and job creates (the Node server's, when OTEL_* is set);
   *  absent: off, and a create keeps the caller's trace context as it came. */
  tracing?: ApiTracing;
}

/** A create's trace context as kept with its job (jobs.traceparent, tracestate). */
export interface JobTraceContext {
  traceparent: string;
  tracestate: string | null;
}

export interface ApiTracing {
  /** Runs the request inside its server span, a child of the caller's traceparent. */
  request: MiddlewareHandler<AppEnv>;
  /** Starts the producer span of a job being created, a child of the request's; the job keeps its
   *  context. `end` is called once the create answered, with the job's id when it was made. */
  jobCreate(attrs: { tenantId: string; type: string; key: string | null }): JobTraceContext & {
    end(jobId: string | null, error?: string): void;
  };
}

type Optional =
  | "metricsText"
  | "metricsToken"
  | "secretsKey"
  | "emailUnavailable"
  | "portalBrand"
  | "executorReadiness"
  | "probeDb"
  | "tracing";
export type ResolvedDeps = Required<Omit<AppDeps, Optional>> & Pick<AppDeps, Optional>;

export type AppEnv = {
  Variables: { deps: ResolvedDeps; tenant: TenantRow; log: Logger; requestId: string };
};
