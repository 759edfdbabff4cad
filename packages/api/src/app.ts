// createApp(deps) returns the API's Hono app: the runtime files (Node server, Worker) only build the
// dependencies and hand them in, and mount the dashboard next to it (dashboardCommands is its way in).
import { Hono, type Handler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { FailedAuthLimiter, loggablePath, newId, silentLogger } from "@fairway/core";
import type { AppDeps, AppEnv, ResolvedDeps } from "./env.ts";
import { admitTenant } from "./admit.ts";
import { requireAdmin, requireTenant } from "./auth.ts";
import { ApiError, databaseUnavailable, errorResponse, loggableError } from "./errors.ts";
import { ROUTES } from "./route-table.ts";
import { scopeOf, type AnyRoute, type Scope } from "./route.ts";
import { MAX_BODY_BYTES } from "./validate.ts";

/** The job and trigger a tenant path names, as log fields (the routes' own ids; never a secret). */
function idsInPath(path: string): { jobId?: string; triggerId?: string } {
  const job = /^\/v1\/jobs\/([^/]{1,100})/.exec(loggablePath(path))?.[1];
  const trigger = /^\/v1\/triggers\/([^/]{1,100})/.exec(loggablePath(path))?.[1];
  return { ...(job ? { jobId: job } : {}), ...(trigger ? { triggerId: trigger } : {}) };
}

/** The deps with their defaults; resolving resolved deps changes nothing (one failedAuth limiter is
 *  shared by the API and the dashboard mounted next to it). */
export function resolveDeps(input: AppDeps): ResolvedDeps {
  return {
    handlerTypes: new Set(),
    apiRatePerSecond: 1000,
    now: Date.now,
    log: silentLogger,
    metricsTopTenants: 20,
    portalOrigins: [],
    failedAuth: new FailedAuthLimiter(),
    admission: null,
    ...input,
  };
}

export function createApp(input: AppDeps) {
  const deps = resolveDeps(input);
  const app = new Hono<AppEnv>();
  // First, so the request's server span holds everything the request does.
  if (deps.tracing) app.use(deps.tracing.request);

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
  // API answers are never cached by a browser or a proxy: several carry secrets (a new key, a signing
  // secret, a portal link), and none is worth keeping. Set before the answer exists, so that it is made
  // with it: a header set on a finished answer makes Hono copy it into a new one whose body is a
  // stream (which the Node adapter then pumps), several times a plain answer's cost.
  app.use("/v1/*", async (c, next) => {
    c.header("cache-control", "no-store");
    await next();
  });
  // Admission before the body limit: the body limit builds the request's web Request and body stream,
  // which a refused request never needs (admit.ts skips all but tenant routes).
  app.use("/v1/*", admitTenant);
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      // Refused unread: the connection is closed rather than left with a body on it.
      onError: (c) =>
        errorResponse(
          c,
          new ApiError(
            413,
            "payload_too_large",
            `the request body is over ${MAX_BODY_BYTES} bytes; send a smaller body`,
            undefined,
            {
              connection: "close",
            },
          ),
        ),
    }),
  );

  // Registered by scope, in the order the credential checks must run: open routes, the admin check
  // and admin routes, then the tenant check and tenant routes (a middleware runs only for handlers
  // registered after it).
  const register = (scope: Scope) => {
    for (const r of ROUTES.filter((r: AnyRoute) => scopeOf(r.path) === scope)) {
      const handlers: Handler<AppEnv>[] = [...(r.use ?? []), r.handler as Handler<AppEnv>];
      app.on(r.method.toUpperCase(), r.path, handlers[0], ...handlers.slice(1));
    }
  };
  // A browser's first request goes to the dashboard, and its icon request finds one: neither is an
  // API operation (not in the route table, so not in the OpenAPI document).
  app.get("/", (c) => c.redirect("/dashboard", 302));
  app.get("/favicon.ico", (c) => c.redirect("/dashboard/assets/favicon.svg", 301));
  register("open");
  app.use("/v1/admin/*", requireAdmin);
  register("admin");
  // Tenant routes took an admission slot (admit.ts, above); their key is checked here.
  app.use("/v1/*", requireTenant);
  register("tenant");

  app.notFound((c) => errorResponse(c, new ApiError(404, "not_found", `no route for ${c.req.method} ${c.req.path}`)));
  app.onError((err, c) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    const unavailable = databaseUnavailable(err);
    if (unavailable) {
      c.var.log?.warn("database unavailable", loggableError(err));
      return errorResponse(c, unavailable);
    }
    c.var.log?.error("unhandled error", { ...loggableError(err), path: loggablePath(c.req.path) });
    return errorResponse(c, new ApiError(500, "internal_error", "an internal error occurred"));
  });
  return app;
}
