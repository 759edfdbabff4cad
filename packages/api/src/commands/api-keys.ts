// Tenant API key commands: issue (the key is shown once; only its hash is stored) and revoke, for the
// admin API and the dashboard alike. Rotating a key is issuing a new one, then revoking the old one
// once the client uses the new one. A refusal is an ApiError and writes nothing.
import { newId, randomToken, sha256Hex } from "@fairway/core";
import { createApiKey, getTenant, revokeApiKey as revokeApiKeyRow } from "@fairway/store";
import { KEY_PREFIX } from "../auth.ts";
import { notFound } from "../errors.ts";
import type { CommandContext } from "./jobs.ts";

/** A new key for the tenant: the only time the key itself is returned. 404 when there is no tenant. */
export async function issueApiKey({ deps, log }: CommandContext, tenantId: string) {
  const t = await getTenant(deps.db, tenantId);
  if (!t) throw notFound("tenant");
  const key = `${KEY_PREFIX}${randomToken(32)}`;
  const row = await createApiKey(deps.db, {
    id: newId("key"),
    tenantId: t.id,
    prefix: key.slice(0, 10),
    hash: await sha256Hex(key),
  });
  log.info("api key created", { tenantId: t.id, keyId: row.id });
  return { id: row.id, key, prefix: row.prefix, createdAt: row.createdAt };
}

/** The key is refused from its next request on, in every process. 404 for a key the tenant does not
 *  have, or has already revoked. */
export async function revokeApiKey({ deps, log }: CommandContext, tenantId: string, keyId: string) {
  if (!(await revokeApiKeyRow(deps.db, tenantId, keyId))) throw notFound("api key");
  log.info("api key revoked", { tenantId, keyId });
  return { id: keyId, revoked: true as const };
}
