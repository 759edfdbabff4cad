// Open routes: health, Prometheus metrics, the OpenAPI document and its interactive reference.
import { Hono } from "hono";
import { allTenantUsage, sql } from "@fairway/store";
import type { AppEnv } from "../app.ts";
import { docsPage } from "../docs-page.ts";
import { openApiDocument } from "../openapi.ts";

export const openRoutes = new Hono<AppEnv>();

openRoutes.get("/healthz", async (c) => {
  try {
    await c.var.deps.db.execute(sql`select 1`);
    return c.json({ status: "ok" });
  } catch {
    return c.json({ status: "degraded", database: "unreachable" }, 503);
  }
});

openRoutes.get("/metrics", async (c) => {
  const rows = await allTenantUsage(c.var.deps.db);
  const lines: string[] = [];
  const gauge = (name: string, help: string, pick: (r: (typeof rows)[number]) => number | null) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const r of rows) lines.push(`${name}{tenant="${r.tenantId}"} ${pick(r) ?? 0}`);
  };
  gauge("fairway_tenant_running", "Triggers running (claimed and not yet settled, released or reaped).", (r) => r.running);
  gauge("fairway_tenant_due", "Pending triggers that are due now.", (r) => r.due);
  gauge("fairway_tenant_max_in_flight", "The tenant's in-flight cap.", (r) => r.maxInFlight);
  gauge("fairway_tenant_dead", "Dead-lettered triggers.", (r) => r.dead);
  gauge("fairway_tenant_oldest_due_lag_ms", "Age of the oldest due trigger.", (r) => r.oldestDueLagMs);
  for (const [name, value] of Object.entries(c.var.deps.metrics?.() ?? {})) {
    lines.push(`# TYPE ${name} counter`, `${name} ${value}`);
  }
  return c.text(lines.join("\n") + "\n", 200, { "content-type": "text/plain; version=0.0.4" });
});

openRoutes.get("/openapi.json", (c) => c.json(openApiDocument()));
openRoutes.get("/docs", (c) => c.html(docsPage));
