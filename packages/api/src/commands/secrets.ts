// Secret commands: store (create or replace), delete, and re-seal every secret after a key rotation,
// for the API's routes and the dashboard alike. A value is sealed before it is stored and never comes
// back out; a refusal is an ApiError and writes nothing.
import { decryptSecret, encryptSecret, type SecretsKeyring } from "@fairway/core";
import {
  deleteSecret as deleteSecretRow,
  putSecret as putSecretRow,
  resealSecret,
  secretsNotSealedWith,
  type SecretInfo,
} from "@fairway/store";
import type { ResolvedDeps } from "../env.ts";
import { ApiError, fromZod, notFound } from "../errors.ts";
import { putSecretBody, secretName } from "../schemas.ts";
import type { CommandContext } from "./jobs.ts";

/** Secrets re-sealed per statement by reencryptSecrets. */
const RESEAL_BATCH = 100;

/** The server's secrets keyring; 503 when it has none (nothing can be sealed or opened). */
function secretsKeyring(deps: Pick<ResolvedDeps, "secretsKey">): SecretsKeyring {
  if (!deps.secretsKey)
    throw new ApiError(
      503,
      "secrets_unavailable",
      "this server has no FAIRWAY_SECRETS_KEY; set it (openssl rand -base64 32) and restart",
    );
  return deps.secretsKey;
}

/** A secret's name from a path or a form, checked before anything is read or written. */
function secretNameParam(raw: string): string {
  const r = secretName.safeParse(raw);
  if (!r.success) throw new ApiError(400, "validation_error", `secret name: ${r.error.issues[0]?.message}`);
  return r.data;
}

/** Creates or replaces a secret from an API-shaped body ({ value }); the answer never holds the value. */
export async function putSecret(
  { deps, log }: CommandContext,
  tenantId: string,
  rawName: string,
  raw: unknown,
): Promise<SecretInfo> {
  const name = secretNameParam(rawName);
  const ring = secretsKeyring(deps);
  const body = putSecretBody.safeParse(raw);
  if (!body.success) throw fromZod(body.error);
  const sealed = await encryptSecret(ring, tenantId, name, body.data.value);
  const row = await putSecretRow(deps.db, tenantId, name, sealed, ring.current.id);
  log.info("secret stored", { name });
  return row;
}

/** Deletes a secret (deliveries naming it then end secret_missing); 404 when there is none. */
export async function deleteSecret({ deps, log }: CommandContext, tenantId: string, rawName: string): Promise<void> {
  const name = secretNameParam(rawName);
  if (!(await deleteSecretRow(deps.db, tenantId, name))) throw notFound("secret");
  log.info("secret deleted", { name });
}

/** After FAIRWAY_SECRETS_KEY changed (the old key now in FAIRWAY_SECRETS_KEY_PREVIOUS): re-seals every
 *  secret under the current key, in batches. A secret sealed with a key the server no longer has is
 *  counted as unreadable and left as it is; once `reencrypted` comes back 0 the previous key can go. */
export async function reencryptSecrets({ deps, log }: CommandContext) {
  const ring = secretsKeyring(deps);
  let resealed = 0;
  let failed = 0;
  for (;;) {
    const rows = await secretsNotSealedWith(deps.db, ring.current.id, RESEAL_BATCH);
    const todo = rows.slice(failed);
    if (todo.length === 0) break;
    for (const row of todo) {
      let value: string;
      try {
        value = await decryptSecret(ring, row.tenantId, row.name, row.sealed);
      } catch {
        failed++;
        continue;
      }
      const sealed = await encryptSecret(ring, row.tenantId, row.name, value);
      if (await resealSecret(deps.db, row, sealed, ring.current.id)) resealed++;
    }
    if (rows.length < RESEAL_BATCH) break;
  }
  log.info("secrets re-encrypted", { resealed, unreadable: failed });
  return { keyId: ring.current.id, reencrypted: resealed, unreadable: failed };
}
