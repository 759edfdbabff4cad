// Fairness-key commands (docs/fairness.md): a key's override and the tenant's key defaults, from
// API-shaped bodies, for the routes (routes/keys.ts) and the dashboard alike. A refusal is an ApiError
// and writes nothing.
import {
  deleteKeyOverride,
  getTenant,
  putKeyOverride,
  setKeyDefaults,
  type Db,
  type KeyInfo,
  type KeyOverride,
  type KeyPolicy,
} from "@fairway/store";
import { ApiError, fromZod } from "../errors.ts";
import { applyMergePatch, parseMerged, type Patch } from "../merge-patch.ts";
import { fairnessKey, keyDefaultsState, putKeyBody } from "../schemas.ts";
import { overridesJson } from "../serialize.ts";

/** A key from the path (Hono has decoded it), checked like a job's key: a bad one is a 400 that says
 *  how to send it, before anything is read or written. */
export function keyParam(raw: string): string {
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

export function keyPolicyJson(p: KeyPolicy) {
  return { maxInFlight: p.maxInFlight, ratePerSecond: p.ratePerSecond, weight: p.weight };
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

/** Applies a merge patch to the tenant's own key defaults; the merged whole is checked, null removes a
 *  field of the tenant's own (its plan's value, else no cap, no rate, weight 1, applies). A refusal
 *  writes nothing. Returns the defaults in force. */
export async function patchKeyDefaults(db: Db, tenantId: string, patch: Patch): Promise<KeyPolicy> {
  const t = await getTenant(db, tenantId);
  const own = (t ? overridesJson(t).keyDefaults : undefined) ?? {};
  const merged = parseMerged(keyDefaultsState, applyMergePatch(own, patch));
  return setKeyDefaults(db, tenantId, {
    maxInFlight: merged.maxInFlight ?? null,
    ratePerSecond: merged.ratePerSecond ?? null,
    weight: merged.weight ?? null,
  });
}
