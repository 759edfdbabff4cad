// Every route of the API, each declared once (route.ts): app.ts registers them, openapi.ts documents
// them, and the tests walk them. The open routes that serve the document live here, beside the table
// they describe.
import { sql, withDeadline } from "@fairway/store";
import { docsPage } from "./docs-page.ts";
import { buildDocument } from "./openapi.ts";
import { route, type AnyRoute } from "./route.ts";
import { adminRoutes } from "./routes/admin.ts";
import { backfillRoutes } from "./routes/backfills.ts";
import { jobBatchRoutes } from "./routes/job-batch.ts";
import { jobRoutes } from "./routes/jobs.ts";
import { keyAdminRoutes, keyRoutes } from "./routes/keys.ts";
import { fleetMetricsRoutes, tenantMetricsRoutes } from "./routes/metrics.ts";
import { notificationRoutes } from "./routes/notifications.ts";
import { operationsRoutes } from "./routes/operations.ts";
import { planRoutes } from "./routes/plans.ts";
import { portalLinkRoutes } from "./routes/portal-link.ts";
import { secretAdminRoutes, secretRoutes } from "./routes/secrets.ts";
import { triggerRoutes } from "./routes/triggers.ts";
import { triggerVerbRoutes } from "./routes/trigger-verbs.ts";

/** How long /readyz waits for the database's answer. */
const READY_DB_MS = 2000;

const openRoutes = [
  route({
    method: "get",
    path: "/healthz",
    summary: "Liveness and database reachability",
    ok: { status: 200, description: "Healthy", json: "Health" },
    also: [{ status: 503, description: "Database unreachable", json: "Health" }],
    handler: async (c) => {
      try {
        await (c.var.deps.probeDb ?? c.var.deps.db).execute(sql`select 1`);
        return c.json({ status: "ok" });
      } catch {
        return c.json({ status: "degraded", database: "unreachable" }, 503);
      }
    },
  }),
  route({
    method: "get",
    path: "/readyz",
    summary: "Readiness: the database answers and this process's executor makes progress",
    ok: { status: 200, description: "Ready", json: "Readiness" },
    also: [{ status: 503, description: "Not ready, with the reason", json: "Readiness" }],
    handler: async (c) => {
      const probeDb = c.var.deps.probeDb ?? c.var.deps.db;
      const database = await withDeadline(probeDb.execute(sql`select 1`), READY_DB_MS, "the readiness probe")
        .then(() => "ok" as const)
        .catch(() => "unreachable" as const);
      const stalled = c.var.deps.executorReadiness?.() ?? null;
      const executor = c.var.deps.executorReadiness ? (stalled ? "stalled" : "ok") : "absent";
      const reason =
        database === "unreachable" ? `the database did not answer within ${READY_DB_MS} ms` : (stalled ?? undefined);
      const body = {
        status: reason ? "not_ready" : "ready",
        database,
        executor,
        ...(reason ? { reason } : {}),
      } as const;
      return c.json(body, reason ? 503 : 200);
    },
  }),
  route({
    method: "get",
    path: "/openapi.json",
    summary: "This document",
    ok: { status: 200, description: "OpenAPI 3.1", json: "OpenApiDocument" },
    handler: (c) => c.json(openApiDocument()),
  }),
  route({
    method: "get",
    path: "/docs",
    summary: "Interactive reference for this document",
    ok: { status: 200, description: "HTML", text: "text/html" },
    handler: (c) => c.html(docsPage),
  }),
];

export const ROUTES: readonly AnyRoute[] = [
  ...openRoutes,
  ...fleetMetricsRoutes,
  ...portalLinkRoutes,
  ...secretAdminRoutes,
  ...adminRoutes,
  ...planRoutes,
  ...operationsRoutes,
  ...keyAdminRoutes,
  ...tenantMetricsRoutes,
  ...jobBatchRoutes,
  ...jobRoutes,
  ...backfillRoutes,
  ...secretRoutes,
  ...triggerRoutes,
  ...triggerVerbRoutes,
  ...notificationRoutes,
  ...keyRoutes,
];

let cached: ReturnType<typeof buildDocument> | null = null;

/** The OpenAPI document of ROUTES (built once per process). */
export function openApiDocument() {
  cached ??= buildDocument(ROUTES);
  return cached;
}
