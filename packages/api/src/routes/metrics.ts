// Metrics: GET /metrics for operators (the admin token or the metrics token), GET /v1/metrics for a
// tenant (its own key; its own series only). Database-derived gauges on every runtime, and the
// process's own histograms and counters where the runtime has them (the Node server's prom-client
// registry, AppDeps.metricsText).
import type { MiddlewareHandler } from "hono";
import { metricsSnapshot } from "@fairway/store";
import type { AppEnv } from "../env.ts";
import { route } from "../route.ts";
import { failedCredential, safeEqual } from "../auth.ts";
import { ApiError } from "../errors.ts";
import { renderSnapshot } from "../metrics-text.ts";

const CONTENT_TYPE = { "content-type": "text/plain; version=0.0.4; charset=utf-8" };

const requireMetricsReader: MiddlewareHandler<AppEnv> = async (c, next) => {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
  const token = m?.[1];
  const { adminToken, metricsToken } = c.var.deps;
  if (token && (safeEqual(token, adminToken) || (metricsToken && safeEqual(token, metricsToken)))) return next();
  const refusal = new ApiError(
    401,
    "unauthorized",
    "send the admin token or FAIRWAY_METRICS_TOKEN as a bearer token",
    undefined,
    { "www-authenticate": "Bearer" },
  );
  throw token ? failedCredential(c, refusal) : refusal;
};

export const fleetMetricsRoutes = [
  route({
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics (admin token or FAIRWAY_METRICS_TOKEN)",
    tag: "Operations",
    operationId: "getFleetMetrics",
    scopeErrors: [401],
    use: [requireMetricsReader],
    ok: { status: 200, description: "Text exposition format", text: "text/plain" },
    handler: async (c) => {
      const { db, metricsTopTenants, metricsText } = c.var.deps;
      let text = renderSnapshot(await metricsSnapshot(db, { topTenants: metricsTopTenants }), "fleet");
      if (metricsText) text += await metricsText();
      return c.text(text, 200, CONTENT_TYPE);
    },
  }),
];

export const tenantMetricsRoutes = [
  route({
    method: "get",
    path: "/v1/metrics",
    summary: "The tenant's own series, Prometheus text",
    ok: { status: 200, description: "Text exposition format", text: "text/plain" },
    handler: async (c) => {
      const snapshot = await metricsSnapshot(c.var.deps.db, { topTenants: 1, tenantId: c.var.tenant.id });
      return c.text(renderSnapshot(snapshot, "tenant"), 200, CONTENT_TYPE);
    },
  }),
];
