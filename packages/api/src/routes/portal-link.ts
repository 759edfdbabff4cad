// POST /v1/admin/tenants/:id/portal-link (admin token): a signed, short-lived link to one tenant's
// dashboard view (packages/dashboard), for a SaaS to hand to its customer or embed in an iframe.
import { createPortalLink, publicOrigin } from "@fairway/core";
import { getTenant } from "@fairway/store";
import { revokePortalSessions } from "../commands/tenants.ts";
import { notFound } from "../errors.ts";
import { route } from "../route.ts";
import { portalLinkBody } from "../schemas.ts";
import { jsonBody } from "../validate.ts";

export const portalLinkRoutes = [
  route({
    method: "post",
    path: "/v1/admin/tenants/:id/portal-link",
    summary: "A signed, short-lived link to the tenant's dashboard view ({ ttlSeconds? }, default 900)",
    params: { id: "The tenant id" },
    body: { name: "CreatePortalLink", optional: true, example: { ttlSeconds: 900 } },
    ok: { status: 201, description: "The link", json: "PortalLink" },
    errors: [400, 404],
    handler: async (c) => {
      const body = await jsonBody(c, portalLinkBody);
      const { deps } = c.var;
      const tenant = await getTenant(deps.db, c.req.param("id"));
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
      return c.json(link, 201);
    },
  }),
  route({
    method: "post",
    path: "/v1/admin/tenants/:id/portal-sessions/revoke",
    summary:
      "End every portal link and session of the tenant now (rotating its signing secret or suspending it does too)",
    params: { id: "The tenant id" },
    ok: { status: 200, description: "Revoked", json: "PortalRevoke" },
    errors: [404],
    handler: async (c) => c.json(await revokePortalSessions(c.var, c.req.param("id"))),
  }),
];
