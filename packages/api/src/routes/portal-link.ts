// POST /v1/admin/tenants/:id/portal-link (admin token): a signed, short-lived link to one tenant's
// dashboard view (packages/dashboard), for a SaaS to hand to its customer or embed in an iframe.
import type { Context } from "hono";
import { z } from "zod";
import {
  createPortalLink,
  PORTAL_LINK_DEFAULT_TTL_S,
  PORTAL_LINK_MAX_TTL_S,
  PORTAL_LINK_MIN_TTL_S,
  publicOrigin,
} from "@fairway/dashboard";
import { getTenant, revokePortalSessions } from "@fairway/store";
import type { AppEnv } from "../app.ts";
import { notFound } from "../errors.ts";
import { jsonBody } from "../validate.ts";

const portalLinkBody = z.strictObject({
  ttlSeconds: z.number().int().min(PORTAL_LINK_MIN_TTL_S).max(PORTAL_LINK_MAX_TTL_S).default(PORTAL_LINK_DEFAULT_TTL_S),
});

export async function createPortalLinkRoute(c: Context<AppEnv>) {
  const body = await jsonBody(c, portalLinkBody);
  const { deps } = c.var;
  const tenant = await getTenant(deps.db, c.req.param("id")!);
  if (!tenant) throw notFound("tenant");
  const link = await createPortalLink({
    secret: deps.adminToken,
    origin: publicOrigin(c),
    tenantId: tenant.id,
    epoch: tenant.portalEpoch,
    ttlSeconds: body.ttlSeconds,
    nowMs: deps.now(),
  });
  c.var.log.info("portal link created", { tenantId: tenant.id, ttlSeconds: body.ttlSeconds });
  c.header("cache-control", "no-store");
  return c.json(link, 201);
}

/** POST /v1/admin/tenants/:id/portal-sessions/revoke: every portal link and session the tenant has
 *  ends now (its portal epoch moves on); links made afterwards work. */
export async function revokePortalSessionsRoute(c: Context<AppEnv>) {
  const tenant = await revokePortalSessions(c.var.deps.db, c.req.param("id")!);
  if (!tenant) throw notFound("tenant");
  c.var.log.info("portal sessions revoked", { tenantId: tenant.id });
  return c.json({ tenantId: tenant.id, revokedAt: new Date(c.var.deps.now()).toISOString() });
}
