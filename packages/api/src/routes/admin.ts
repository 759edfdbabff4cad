// Admin routes (admin token): tenants and their quotas, API keys, signing-secret rotation, pools, stats.
import { generateSigningSecret, newId, randomToken, sha256Hex } from "@fairway/core";
import {
  allTenantUsage,
  handlerPoolStatus,
  poolStats,
  createApiKey,
  createTenant,
  getPool,
  getTenant,
  listPools,
  listTenants,
  putPool,
  revokeApiKey,
  rotateSigningSecret,
  updateTenant,
  DEFAULT_POOL,
  type Db,
} from "@fairway/store";
import type { z } from "zod";
import { route } from "../route.ts";
import { KEY_PREFIX } from "../auth.ts";
import { ApiError, fromZod, notFound } from "../errors.ts";
import { applyMergePatch, mergePatchBody, parseMerged } from "../merge-patch.ts";
import { createTenantBody, pageQuery, poolType, putPoolBody, tenantState } from "../schemas.ts";
import { page, tenantJson } from "../serialize.ts";
import { jsonBody, queryOf } from "../validate.ts";

const TENANT_ID = { id: "The tenant id" };
const POOL_TYPE = { type: "The pool type, e.g. webhook or email.send" };

/** How long a rotated-out signing secret keeps signing deliveries. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

function poolTypeParam(raw: string): string {
  const type = poolType.safeParse(raw);
  if (!type.success) throw fromZod(type.error);
  return type.data;
}

async function savePool(db: Db, type: string, body: z.infer<typeof putPoolBody>) {
  const leaseMs = body.leaseMs ?? Math.max(DEFAULT_POOL.leaseMs, body.timeoutMs + 30_000);
  if (leaseMs < body.timeoutMs + 1000) {
    throw new ApiError(
      400,
      "validation_error",
      "leaseMs must exceed timeoutMs by at least 1000 ms (a run must end before its lease)",
    );
  }
  return putPool(db, { ...DEFAULT_POOL, ...body, leaseMs, type });
}

export const adminRoutes = [
  route({
    method: "post",
    path: "/v1/admin/tenants",
    summary: "Create a tenant",
    body: { name: "CreateTenant", example: { name: "Example Co" } },
    ok: { status: 201, description: "The tenant and its signing secret (shown once)", json: "CreatedTenant" },
    errors: [400, 409],
    handler: async (c) => {
      const body = await jsonBody(c, createTenantBody);
      const signingSecret = generateSigningSecret();
      const row = await createTenant(c.var.deps.db, {
        ...body,
        id: body.id ?? newId("ten").toLowerCase(),
        signingSecret,
      });
      if (!row) throw new ApiError(409, "tenant_exists", `a tenant with id "${body.id}" already exists`);
      c.var.log.info("tenant created", { tenantId: row.id });
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
      const patch = await mergePatchBody(c);
      const current = await getTenant(c.var.deps.db, c.req.param("id"));
      if (!current) throw notFound("tenant");
      const { id: _id, createdAt: _c, updatedAt: _u, ...editable } = tenantJson(current);
      const merged = parseMerged(tenantState, applyMergePatch(editable, patch));
      const fields = Object.keys(patch) as Array<keyof typeof merged>;
      const changes = Object.fromEntries(fields.map((k) => [k, merged[k] ?? null]));
      const t = await updateTenant(c.var.deps.db, current.id, changes);
      if (!t) throw notFound("tenant");
      c.var.log.info("tenant updated", { tenantId: t.id, fields });
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
    handler: async (c) => {
      const t = await getTenant(c.var.deps.db, c.req.param("id"));
      if (!t) throw notFound("tenant");
      const key = `${KEY_PREFIX}${randomToken(32)}`;
      const row = await createApiKey(c.var.deps.db, {
        id: newId("key"),
        tenantId: t.id,
        prefix: key.slice(0, 10),
        hash: await sha256Hex(key),
      });
      c.var.log.info("api key created", { tenantId: t.id, keyId: row.id });
      return c.json({ id: row.id, key, prefix: row.prefix, createdAt: row.createdAt }, 201);
    },
  }),
  route({
    method: "delete",
    path: "/v1/admin/tenants/:id/keys/:keyId",
    summary: "Revoke a key",
    params: { ...TENANT_ID, keyId: "The key id" },
    ok: { status: 200, description: "Revoked", json: "RevokedKey" },
    errors: [404],
    handler: async (c) => {
      const ok = await revokeApiKey(c.var.deps.db, c.req.param("id"), c.req.param("keyId"));
      if (!ok) throw notFound("api key");
      return c.json({ id: c.req.param("keyId"), revoked: true });
    },
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
    handler: async (c) => {
      const secret = generateSigningSecret();
      const t = await rotateSigningSecret(c.var.deps.db, c.req.param("id"), secret, ROTATION_OVERLAP_MS);
      if (!t) throw notFound("tenant");
      return c.json({ signingSecret: secret, previousSecretExpiresAt: t.previousSecretExpiresAt });
    },
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
    handler: async (c) => {
      const type = poolTypeParam(c.req.param("type"));
      const body = await jsonBody(c, putPoolBody);
      return c.json(await savePool(c.var.deps.db, type, body));
    },
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
    handler: async (c) => {
      const type = poolTypeParam(c.req.param("type"));
      const patch = await mergePatchBody(c);
      const { type: _t, paused: _p, ...current } = await getPool(c.var.deps.db, type);
      const body = parseMerged(putPoolBody, applyMergePatch(current, patch));
      if ("timeoutMs" in patch && !("leaseMs" in patch) && (body.leaseMs ?? 0) < body.timeoutMs + 1000)
        delete body.leaseMs;
      return c.json(await savePool(c.var.deps.db, type, body));
    },
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
