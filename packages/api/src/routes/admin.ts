// Admin routes (admin token): tenants and their quotas, API keys, signing-secret rotation, pools, stats.
// State changes are commands (commands/*.ts); the routes parse the request and read.
import {
  allTenantUsage,
  getPool,
  getTenant,
  handlerPoolStatus,
  listPools,
  listTenants,
  poolStats,
} from "@fairway/store";
import { route } from "../route.ts";
import { issueApiKey, revokeApiKey } from "../commands/api-keys.ts";
import { patchPoolConfig, poolTypeParam, putPoolConfig } from "../commands/pools.ts";
import { createTenant, rotateSigningSecret, updateTenant } from "../commands/tenants.ts";
import { notFound } from "../errors.ts";
import { mergePatchBody } from "../merge-patch.ts";
import { createTenantBody, pageQuery } from "../schemas.ts";
import { page, tenantJson } from "../serialize.ts";
import { jsonBody, queryOf, rawJsonBody } from "../validate.ts";

const TENANT_ID = { id: "The tenant id" };
const POOL_TYPE = { type: "The pool type, e.g. webhook or email.send" };

export const adminRoutes = [
  route({
    method: "post",
    path: "/v1/admin/tenants",
    summary: "Create a tenant",
    body: { name: "CreateTenant", example: { name: "Example Co" } },
    ok: { status: 201, description: "The tenant and its signing secret (shown once)", json: "CreatedTenant" },
    errors: [400, 409],
    handler: async (c) => {
      const { row, signingSecret } = await createTenant(c.var, await jsonBody(c, createTenantBody));
      return c.json({ ...tenantJson(row), signingSecret }, 201);
    },
  }),
  route({
    method: "get",
    path: "/v1/admin/tenants",
    summary: "List tenants",
    query: pageQuery,
    ok: { status: 200, description: "A page of tenants", json: "TenantPage" },
    errors: [400],
    handler: async (c) => {
      const q = queryOf(c, pageQuery);
      const rows = await listTenants(c.var.deps.db, q.cursor ?? null, q.limit);
      return c.json(page(rows, q.limit, tenantJson));
    },
  }),
  route({
    method: "get",
    path: "/v1/admin/tenants/:id",
    summary: "A tenant",
    params: TENANT_ID,
    ok: { status: 200, description: "The tenant", json: "Tenant" },
    errors: [404],
    handler: async (c) => {
      const t = await getTenant(c.var.deps.db, c.req.param("id"));
      if (!t) throw notFound("tenant");
      return c.json(tenantJson(t));
    },
  }),
  /** JSON Merge Patch: the tenant's fields with the patch merged in are checked as a whole; only the
   *  fields the patch names are written. null clears ratePerSecond and burst (no rate limit). */
  route({
    method: "patch",
    path: "/v1/admin/tenants/:id",
    summary: "Update quotas or status (JSON Merge Patch)",
    params: TENANT_ID,
    body: { name: "UpdateTenant", mergePatch: true, example: { weight: 2 } },
    ok: { status: 200, description: "The tenant", json: "Tenant" },
    errors: [400, 404],
    handler: async (c) => {
      const t = await updateTenant(c.var, c.req.param("id"), await mergePatchBody(c));
      return c.json(tenantJson(t));
    },
  }),
  route({
    method: "post",
    path: "/v1/admin/tenants/:id/keys",
    summary: "Issue an API key (shown once)",
    params: TENANT_ID,
    ok: { status: 201, description: "The key", json: "ApiKey" },
    errors: [404],
    handler: async (c) => c.json(await issueApiKey(c.var, c.req.param("id")), 201),
  }),
  route({
    method: "delete",
    path: "/v1/admin/tenants/:id/keys/:keyId",
    summary: "Revoke a key",
    params: { ...TENANT_ID, keyId: "The key id" },
    ok: { status: 200, description: "Revoked", json: "RevokedKey" },
    errors: [404],
    handler: async (c) => c.json(await revokeApiKey(c.var, c.req.param("id"), c.req.param("keyId"))),
  }),
  /** The secret deliveries are signed with, for the tenant's receiver to verify them. It grants nothing
   *  in Fairway's API (it is not a credential here), so the admin may read it again at any time. */
  route({
    method: "get",
    path: "/v1/admin/tenants/:id/signing-secret",
    summary: "The signing secret (and the previous one during a rotation)",
    params: TENANT_ID,
    ok: { status: 200, description: "The secret", json: "SigningSecret" },
    errors: [404],
    handler: async (c) => {
      const t = await getTenant(c.var.deps.db, c.req.param("id"));
      if (!t) throw notFound("tenant");
      const previous =
        t.previousSigningSecret && t.previousSecretExpiresAt && t.previousSecretExpiresAt > new Date()
          ? { previousSigningSecret: t.previousSigningSecret, previousSecretExpiresAt: t.previousSecretExpiresAt }
          : {};
      return c.json({ signingSecret: t.signingSecret, ...previous });
    },
  }),
  route({
    method: "post",
    path: "/v1/admin/tenants/:id/signing-secret/rotate",
    summary: "Rotate the signing secret (the old one keeps signing for 24 h)",
    params: TENANT_ID,
    ok: { status: 200, description: "The new secret", json: "RotatedSecret" },
    errors: [404],
    handler: async (c) => c.json(await rotateSigningSecret(c.var, c.req.param("id"))),
  }),
  route({
    method: "get",
    path: "/v1/admin/pools",
    summary: "Every pool's config",
    ok: { status: 200, description: "The pools", json: "PoolList" },
    handler: async (c) => c.json({ data: await listPools(c.var.deps.db) }),
  }),
  route({
    method: "get",
    path: "/v1/admin/pools/:type",
    summary: "Pool config (defaults if never set)",
    params: POOL_TYPE,
    ok: { status: 200, description: "The pool", json: "Pool" },
    errors: [400],
    handler: async (c) => c.json(await getPool(c.var.deps.db, poolTypeParam(c.req.param("type")))),
  }),
  route({
    method: "put",
    path: "/v1/admin/pools/:type",
    summary: "Set pool config",
    params: POOL_TYPE,
    body: { name: "PutPool", example: { concurrency: 5, timeoutMs: 1000 } },
    ok: { status: 200, description: "The pool", json: "Pool" },
    errors: [400],
    handler: async (c) => c.json(await putPoolConfig(c.var, c.req.param("type"), await rawJsonBody(c))),
  }),
  /** JSON Merge Patch of the pool's config (defaults when it has none yet). null resets a field to its
   *  default (leaseMs: derived from timeoutMs); the merged config is checked like a PUT. */
  route({
    method: "patch",
    path: "/v1/admin/pools/:type",
    summary: "Change pool config (JSON Merge Patch)",
    params: POOL_TYPE,
    body: { name: "UpdatePool", mergePatch: true, example: { timeoutMs: 2000 } },
    ok: { status: 200, description: "The pool", json: "Pool" },
    errors: [400],
    handler: async (c) => c.json(await patchPoolConfig(c.var, c.req.param("type"), await mergePatchBody(c))),
  }),
  route({
    method: "get",
    path: "/v1/admin/stats",
    summary: "Per-tenant figures, and handler pools",
    ok: { status: 200, description: "Stats", json: "Stats" },
    handler: async (c) => {
      const rows = await allTenantUsage(c.var.deps.db);
      return c.json({
        tenants: rows,
        pools: await poolStats(c.var.deps.db),
        handlerPools: await handlerPoolStatus(c.var.deps.db),
      });
    },
  }),
];
