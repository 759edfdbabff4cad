// Fairness keys (docs/fairness.md): a tenant's key defaults (JSON Merge Patch) and per-key overrides,
// and the keys with work now. The tenant's routes live under /v1; the admin's the same under
// /v1/admin/tenants/:id, as key-defaults and fairness-keys (/keys there are API keys). The dashboard is
// handed putKeyPolicy and patchKeyDefaults, so its forms are checked and refused exactly as here.
import { Hono, type Context } from "hono";
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
import type { AppEnv } from "../app.ts";
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

/** The handlers, for a tenant found by `tenantOf` (its own key, or the admin's path). */
function keyHandlers(tenantOf: (c: Context<AppEnv>) => Promise<string>) {
  const db = (c: Context<AppEnv>) => c.var.deps.db;
  return {
    getDefaults: async (c: Context<AppEnv>) => c.json(keyPolicyJson(await getKeyDefaults(db(c), await tenantOf(c)))),
    patchDefaults: async (c: Context<AppEnv>) => {
      const patch = await mergePatchBody(c);
      const tenantId = await tenantOf(c);
      const policy = await patchKeyDefaults(db(c), tenantId, patch);
      c.var.log.info("key defaults updated", { tenantId, fields: Object.keys(patch) });
      return c.json(keyPolicyJson(policy));
    },
    list: async (c: Context<AppEnv>) => {
      const q = queryOf(c, keyListQuery);
      const r = await listKeys(db(c), await tenantOf(c), { cursor: q.cursor, limit: q.limit });
      return c.json({ data: r.data.map(keyInfoJson), nextCursor: r.nextCursor });
    },
    get: async (c: Context<AppEnv>) => {
      const key = keyParam(c.req.param("key")!);
      return c.json(keyInfoJson(await getKeyInfo(db(c), await tenantOf(c), key)));
    },
    put: async (c: Context<AppEnv>) => {
      const key = keyParam(c.req.param("key")!);
      const raw = await rawJsonBody(c);
      const tenantId = await tenantOf(c);
      const info = await putKeyPolicy(db(c), tenantId, key, raw);
      c.var.log.info("key override set", { tenantId });
      return c.json(keyInfoJson(info));
    },
    /** Back to the defaults; idempotent (a key without an override answers the same). */
    delete: async (c: Context<AppEnv>) => {
      const key = keyParam(c.req.param("key")!);
      const tenantId = await tenantOf(c);
      await deleteKeyPolicy(db(c), tenantId, key);
      return c.json(keyInfoJson(await getKeyInfo(db(c), tenantId, key)));
    },
  };
}

export const keyRoutes = new Hono<AppEnv>();
{
  const h = keyHandlers(async (c) => c.var.tenant.id);
  keyRoutes.get("/key-defaults", h.getDefaults);
  keyRoutes.patch("/key-defaults", h.patchDefaults);
  keyRoutes.get("/keys", h.list);
  keyRoutes.get("/keys/:key", h.get);
  keyRoutes.put("/keys/:key", h.put);
  keyRoutes.delete("/keys/:key", h.delete);
}

export const keyAdminRoutes = new Hono<AppEnv>();
{
  const h = keyHandlers(async (c) => {
    const t = await getTenant(c.var.deps.db, c.req.param("id")!);
    if (!t) throw notFound("tenant");
    return t.id;
  });
  keyAdminRoutes.get("/tenants/:id/key-defaults", h.getDefaults);
  keyAdminRoutes.patch("/tenants/:id/key-defaults", h.patchDefaults);
  keyAdminRoutes.get("/tenants/:id/fairness-keys", h.list);
  keyAdminRoutes.get("/tenants/:id/fairness-keys/:key", h.get);
  keyAdminRoutes.put("/tenants/:id/fairness-keys/:key", h.put);
  keyAdminRoutes.delete("/tenants/:id/fairness-keys/:key", h.delete);
}
