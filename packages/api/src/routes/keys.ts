// Fairness keys (docs/fairness.md): a tenant's key defaults (JSON Merge Patch) and per-key overrides,
// and the keys with work now. The tenant's routes live under /v1; the admin's the same under
// /v1/admin/tenants/:id, as key-defaults and fairness-keys (/keys there are API keys). Changes go
// through commands/keys.ts, which the dashboard's forms call too.
import type { Context } from "hono";
import { getKeyDefaults, getKeyInfo, getTenant, listKeys, type KeyInfo } from "@fairway/store";
import type { AppEnv } from "../env.ts";
import { route } from "../route.ts";
import { notFound } from "../errors.ts";
import { mergePatchBody } from "../merge-patch.ts";
import { keyListQuery } from "../schemas.ts";
import { deleteKeyPolicy, keyParam, keyPolicyJson, patchKeyDefaults, putKeyPolicy } from "../commands/keys.ts";
import { queryOf, rawJsonBody } from "../validate.ts";

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
