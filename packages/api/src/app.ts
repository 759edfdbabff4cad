// createApp(deps) returns the Hono app: the runtime files (Node server, Worker) only
// build the dependencies and hand them in.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { FailedAuthLimiter, newId, silentLogger, type Logger, type SecretsKeyring } from "@fairway/core";
import type { Coordinator } from "@fairway/coord";
import type { Db, TenantRow } from "@fairway/store";
import { clientAddress, requireAdmin, requireTenant } from "./auth.ts";
import { ApiError, errorResponse, loggableError } from "./errors.ts";
import { adminRoutes } from "./routes/admin.ts";
import { jobRoutes } from "./routes/jobs.ts";
import { fleetMetricsRoutes, tenantMetricsRoutes } from "./routes/metrics.ts";
import { openRoutes } from "./routes/open.ts";
import { secretAdminRoutes, secretRoutes } from "./routes/secrets.ts";
import { operationsRoutes } from "./routes/operations.ts";
import { triggerRoutes } from "./routes/triggers.ts";
import { addChannel, notificationRoutes } from "./routes/notifications.ts";
import { createPortalLinkRoute, revokePortalSessionsRoute } from "./routes/portal-link.ts";
import { dashboardApp, loggablePath } from "@fairway/dashboard";

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
}

type Optional = "metricsText" | "metricsToken" | "secretsKey" | "emailUnavailable";
export type ResolvedDeps = Required<Omit<AppDeps, Optional>> & Pick<AppDeps, Optional>;

export type AppEnv = {
  Variables: { deps: ResolvedDeps; tenant: TenantRow; log: Logger; requestId: string };
};

/** The job and trigger a tenant path names, as log fields (the routes' own ids; never a secret). */
function idsInPath(path: string): { jobId?: string; triggerId?: string } {
  const job = /^\/v1\/jobs\/([^/]{1,100})/.exec(loggablePath(path))?.[1];
  const trigger = /^\/v1\/triggers\/([^/]{1,100})/.exec(loggablePath(path))?.[1];
  return { ...(job ? { jobId: job } : {}), ...(trigger ? { triggerId: trigger } : {}) };
}

/** Request bodies larger than this are refused before parsing (per-tenant payload limits are lower). */
const MAX_BODY_BYTES = 11 * 1024 * 1024;

export function createApp(input: AppDeps) {
  const deps: ResolvedDeps = {
    handlerTypes: new Set(),
    apiRatePerSecond: 1000,
    now: Date.now,
    log: silentLogger,
    metricsTopTenants: 20,
    portalOrigins: [],
    failedAuth: new FailedAuthLimiter(),
    ...input,
  };
  const app = new Hono<AppEnv>();

  app.use(async (c, next) => {
    // Every JSON reply ends with a newline, so `curl` output does not run into the prompt or the next
    // reply. (c.json is a per-request property, so this covers routes, errors and not-found alike.)
    const body = c.body as (data: string, arg?: unknown, headers?: unknown) => Response;
    c.json = ((object: unknown, arg?: unknown, headers?: unknown) => {
      c.header("content-type", "application/json");
      return body(`${JSON.stringify(object)}\n`, arg, headers);
    }) as unknown as typeof c.json;
    const requestId = c.req.header("x-request-id")?.slice(0, 100) || newId("req");
    c.set("deps", deps);
    c.set("requestId", requestId);
    c.set("log", deps.log.child({ requestId }));
    c.header("x-request-id", requestId);
    // A NUL can only arrive percent-encoded; Postgres text refuses it, so it would surface as a 500.
    if (/%00/.test(c.req.url)) throw new ApiError(400, "invalid_text", "the URL must not contain NUL characters");
    const started = performance.now();
    await next();
    // One access line per request. c.var.log carries tenantId once a tenant key was accepted.
    c.var.log.info("request", {
      method: c.req.method,
      path: loggablePath(c.req.path),
      status: c.res.status,
      durationMs: Math.round(performance.now() - started),
      ...idsInPath(c.req.path),
    });
  });
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => errorResponse(c, new ApiError(413, "payload_too_large", "request body too large")),
    }),
  );

  // API answers are never cached by a browser or a proxy: several carry secrets (a new key, a signing
  // secret, a portal link), and none is worth keeping.
  app.use("/v1/*", async (c, next) => {
    await next();
    c.header("cache-control", "no-store");
  });
  app.route("/", openRoutes);
  app.route("/", fleetMetricsRoutes);
  app.use("/v1/admin/*", requireAdmin);
  app.post("/v1/admin/tenants/:id/portal-link", createPortalLinkRoute);
  app.post("/v1/admin/tenants/:id/portal-sessions/revoke", revokePortalSessionsRoute);
  app.route("/v1/admin/secrets", secretAdminRoutes);
  app.route("/v1/admin", adminRoutes);
  app.route("/v1/admin", operationsRoutes);
  app.route(
    "/dashboard",
    dashboardApp({
      ...deps,
      addChannel: (tenantId, body) => addChannel(deps, tenantId, body, deps.log),
      clientAddress,
    }),
  );
  app.use("/v1/*", requireTenant);
  app.route("/v1", tenantMetricsRoutes);
  app.route("/v1/jobs", jobRoutes);
  app.route("/v1/secrets", secretRoutes);
  app.route("/v1", triggerRoutes);
  app.route("/v1", notificationRoutes);

  app.notFound((c) => errorResponse(c, new ApiError(404, "not_found", `no route for ${c.req.method} ${c.req.path}`)));
  app.onError((err, c) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    c.var.log?.error("unhandled error", { ...loggableError(err), path: loggablePath(c.req.path) });
    return errorResponse(c, new ApiError(500, "internal_error", "an internal error occurred"));
  });
  return app;
}
