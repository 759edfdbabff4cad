// Metrics: GET /metrics for operators (the admin token or the metrics token), GET /v1/metrics for a
// tenant (its own key; its own series only). Database-derived gauges on every runtime, and the
// process's own histograms and counters where the runtime has them (the Node server's prom-client
// registry, AppDeps.metricsText).
import type { MiddlewareHandler } from "hono";
import { layoutOf, metricsSnapshot, topKeys, type Db } from "@fairway/store";
import type { AppEnv } from "../env.ts";
import { route } from "../route.ts";
import { failedCredential, safeEqual } from "../auth.ts";
import { ApiError } from "../errors.ts";
import { KEY_SERIES_PER_TENANT, renderAdmission, renderCluster, renderKeys, renderSnapshot } from "../metrics-text.ts";

const keysOf = (db: Db, tenantIds: string[]) =>
  Promise.all(
    tenantIds.map(async (tenantId) => ({ tenantId, keys: await topKeys(db, tenantId, KEY_SERIES_PER_TENANT) })),
  );

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
      const { db, metricsTopTenants, metricsText, admission } = c.var.deps;
      // On a Citus cluster the fleet's gauges read every node: with one down they are left out, and
      // the per-node series (read node by node) say which is down.
      const nodes = await (await layoutOf(db)).nodes(db);
      let text = "";
      try {
        const snapshot = await metricsSnapshot(db, { topTenants: metricsTopTenants });
        text += renderSnapshot(snapshot, "fleet");
        text += renderKeys(
          await keysOf(
            db,
            snapshot.tenants.map((t) => t.tenantId),
          ),
          "fleet",
        );
      } catch (err) {
        if (!nodes?.some((n) => !n.up)) throw err;
      }
      if (nodes) text += renderCluster(nodes);
      if (admission) text += renderAdmission(admission.snapshot(), metricsTopTenants);
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
      const keys = renderKeys(await keysOf(c.var.deps.db, [c.var.tenant.id]), "tenant");
      return c.text(renderSnapshot(snapshot, "tenant") + keys, 200, CONTENT_TYPE);
    },
  }),
];
