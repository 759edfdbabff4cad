// One tenant's pages, for the operator (/dashboard/admin/t/:tenantId) and for a portal session
// (/dashboard/portal/:session). Every read and action is filtered by c.var.tenantId, which the mounting
// middleware took from the signed session or checked against the operator's: another tenant's job or
// trigger is simply not found. Each section of the tenant navigation (TENANT_SECTIONS, layout.tsx) is
// one page module routed here.
import { Hono } from "hono";
import type { DashEnv } from "./deps.ts";
import { flowControlPages } from "./flow-control.tsx";
import { jobFormPages } from "./job-form.tsx";
import { jobPages } from "./job-pages.tsx";
import { keysPage } from "./keys-page.tsx";
import { notificationsPage } from "./notifications-page.tsx";
import { secretsPage } from "./secrets-page.tsx";
import { triggerPages } from "./trigger-pages.tsx";
import { usagePage } from "./usage-page.tsx";

export const tenantPages = new Hono<DashEnv>();
// The form first: /jobs/new is not a job id.
tenantPages.route("/", jobFormPages);
tenantPages.route("/", jobPages);
tenantPages.route("/", triggerPages);
tenantPages.route("/", keysPage);
tenantPages.route("/", secretsPage);
tenantPages.route("/", notificationsPage);
tenantPages.route("/", usagePage);
tenantPages.route("/", flowControlPages);
