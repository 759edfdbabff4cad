// Fairness keys (docs/fairness.md): a tenant's key defaults (JSON Merge Patch) and per-key overrides,
// and the keys with work now. The tenant's routes live under /v1; the admin's the same under
// /v1/admin/tenants/:id, as key-defaults and fairness-keys (/keys there are API keys). The dashboard is
// handed putKeyPolicy and patchKeyDefaults, so its forms are checked and refused exactly as here.
import type { Context } from "hono";
import {
  deleteKeyOverride,
  getKeyDefaults,
  getKeyInfo,
  getTenant,
  listKeys,
  putKeyOverride,
  setKeyDefaults,
  type Db,
  type KeyInfo,
  type KeyOverride,
  type KeyPolicy,
} from "@fairway/store";
import type { AppEnv } from "../env.ts";
import { route } from "../route.ts";
import { ApiError, fromZod, notFound } from "../errors.ts";
import { applyMergePatch, mergePatchBody, parseMerged, type Patch } from "../merge-patch.ts";
import { fairnessKey, keyDefaultsState, keyListQuery, putKeyBody } from "../schemas.ts";
import { queryOf, rawJsonBody } from "../validate.ts";

/** A key from the path (Hono has decoded it), checked like a job's key: a bad one is a 400 that says
 *  how to send it, before anything is read or written. */
function keyParam(raw: string): string {
  const r = fairnessKey.safeParse(raw);
  if (!r.success) {
    throw new ApiError(
      400,
      "invalid_key",
      `key: ${r.error.issues[0]?.message ?? "invalid"}; URL-encode it in the path (encodeURIComponent)`,
    );
  }
  return r.data;
}

function keyPolicyJson(p: KeyPolicy) {
  return { maxInFlight: p.maxInFlight, ratePerSecond: p.ratePerSecond, weight: p.weight };
}

function keyInfoJson(k: KeyInfo) {
  return {
    key: k.key,
    override: k.override ? { ...k.override } : null,
    policy: keyPolicyJson(k.policy),
    running: k.running,
    due: k.due,
    oldestDueLagMs: k.oldestDueLagMs === null ? null : Math.round(k.oldestDueLagMs),
    workerTimeShare: k.workerTimeShare,
  };
}

/** Sets one key's override from an API-shaped body (parsed JSON, or the dashboard's form as the same
 *  shape); a refusal is an ApiError and writes nothing. */
export async function putKeyPolicy(db: Db, tenantId: string, key: string, raw: unknown): Promise<KeyInfo> {
  const k = keyParam(key);
  const r = putKeyBody.safeParse(raw);
  if (!r.success) throw fromZod(r.error);
  const override: KeyOverride = {};
  for (const f of ["maxInFlight", "ratePerSecond", "weight"] as const) {
    if (r.data[f] !== undefined) (override as Record<string, unknown>)[f] = r.data[f];
  }
  return putKeyOverride(db, tenantId, k, override);
}

/** Returns a key to the defaults (false: it had no override). */
export async function deleteKeyPolicy(db: Db, tenantId: string, key: string): Promise<boolean> {
  return deleteKeyOverride(db, tenantId, keyParam(key));
}

/** Applies a merge patch to the tenant's key defaults; the merged whole is checked, null returns a
 *  field to its default (no cap, no rate, weight 1). A refusal writes nothing. */
export async function patchKeyDefaults(db: Db, tenantId: string, patch: Patch): Promise<KeyPolicy> {
  const current = await getKeyDefaults(db, tenantId);
  const merged = parseMerged(keyDefaultsState, applyMergePatch(keyPolicyJson(current), patch));
  return setKeyDefaults(db, tenantId, {
    maxInFlight: merged.maxInFlight ?? null,
    ratePerSecond: merged.ratePerSecond ?? null,
    weight: merged.weight ?? 1,
  });
}

/** The key routes under `prefix`, for a tenant found by `tenantOf` (its own key, or the admin's path).
 *  The admin's list is `fairness-keys`: /v1/admin/tenants/:id/keys are API keys. */
function keyRouteSet(
  prefix: string,
  keys: string,
  params: Record<string, string>,
  tenantOf: (c: Context<AppEnv>) => Promise<string>,
) {
  const db = (c: Context<AppEnv>) => c.var.deps.db;
  const one = { ...params, key: "The fairness key, URL-encoded (1-128 characters, no control characters)" };
  const missing = Object.keys(params).length > 0 ? [404] : [];
  return [
    route({
      method: "get",
      path: `${prefix}/key-defaults`,
      summary: "The policy of every fairness key without an override (default: no cap, no rate, weight 1)",
      params,
      ok: { status: 200, description: "The defaults", json: "KeyPolicy" },
      errors: missing,
      handler: async (c) => c.json(keyPolicyJson(await getKeyDefaults(db(c), await tenantOf(c)))),
    }),
    route({
      method: "patch",
      path: `${prefix}/key-defaults`,
      summary: "Change the key defaults (JSON Merge Patch; null returns a field to its default)",
      params,
      body: { name: "UpdateKeyDefaults", mergePatch: true, example: { weight: 2, ratePerSecond: null } },
      ok: { status: 200, description: "The defaults", json: "KeyPolicy" },
      errors: [400, ...missing],
      handler: async (c) => {
        const patch = await mergePatchBody(c);
        const tenantId = await tenantOf(c);
        const policy = await patchKeyDefaults(db(c), tenantId, patch);
        c.var.log.info("key defaults updated", { tenantId, fields: Object.keys(patch) });
        return c.json(keyPolicyJson(policy));
      },
    }),
    route({
      method: "get",
      path: `${prefix}/${keys}`,
      summary: "Keys with due or running work, and keys with an override, by key",
      params,
      query: keyListQuery,
      ok: { status: 200, description: "A page of keys", json: "KeyPage" },
      errors: [400, ...missing],
      handler: async (c) => {
        const q = queryOf(c, keyListQuery);
        const r = await listKeys(db(c), await tenantOf(c), { cursor: q.cursor, limit: q.limit });
        return c.json({ data: r.data.map(keyInfoJson), nextCursor: r.nextCursor });
      },
    }),
    route({
      method: "get",
      path: `${prefix}/${keys}/:key`,
      summary: "A key: running, due, oldest due lag, worker time share, override and policy in force",
      params: one,
      ok: { status: 200, description: "The key (a key never seen: zeros, no override)", json: "KeyInfo" },
      errors: [400, ...missing],
      handler: async (c) => {
        const key = keyParam(c.req.param("key")!);
        return c.json(keyInfoJson(await getKeyInfo(db(c), await tenantOf(c), key)));
      },
    }),
    route({
      method: "put",
      path: `${prefix}/${keys}/:key`,
      summary: "Override a key's policy (a field left out takes the default; null: no cap or no rate)",
      params: one,
      body: { name: "PutKey", example: { maxInFlight: 2, weight: 3 } },
      ok: { status: 200, description: "The key", json: "KeyInfo" },
      errors: [400, ...missing],
      handler: async (c) => {
        const key = keyParam(c.req.param("key")!);
        const raw = await rawJsonBody(c);
        const tenantId = await tenantOf(c);
        const info = await putKeyPolicy(db(c), tenantId, key, raw);
        c.var.log.info("key override set", { tenantId });
        return c.json(keyInfoJson(info));
      },
    }),
    route({
      method: "delete",
      path: `${prefix}/${keys}/:key`,
      summary: "Return a key to the defaults (idempotent)",
      params: one,
      ok: { status: 200, description: "The key", json: "KeyInfo" },
      errors: [400, ...missing],
      handler: async (c) => {
        const key = keyParam(c.req.param("key")!);
        const tenantId = await tenantOf(c);
        await deleteKeyPolicy(db(c), tenantId, key);
        return c.json(keyInfoJson(await getKeyInfo(db(c), tenantId, key)));
      },
    }),
  ];
}

export const keyRoutes = keyRouteSet("/v1", "keys", {}, async (c) => c.var.tenant.id);

export const keyAdminRoutes = keyRouteSet(
  "/v1/admin/tenants/:id",
  "fairness-keys",
  { id: "The tenant id" },
  async (c) => {
    const t = await getTenant(c.var.deps.db, c.req.param("id")!);
    if (!t) throw notFound("tenant");
    return t.id;
  },
);
