// Open routes: health, the OpenAPI document and its interactive reference. (Metrics need a token:
// routes/metrics.ts.)
import { Hono } from "hono";
import { sql } from "@fairway/store";
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

openRoutes.get("/openapi.json", (c) => c.json(openApiDocument()));
openRoutes.get("/docs", (c) => c.html(docsPage));
