// Tenant secrets: PUT (create or replace), list (names only), DELETE. A value goes in once and never
// comes out of the API: it is sealed before it is stored and only the executor opens it, at delivery.
// The admin route re-seals every secret under the current key after a key rotation.
import { encryptSecret, decryptSecret, type SecretsKeyring } from "@fairway/core";
import {
  deleteSecret,
  listSecrets,
  putSecret,
  resealSecret,
  secretsNotSealedWith,
  type SecretInfo,
} from "@fairway/store";
import type { AppEnv } from "../env.ts";
import { route } from "../route.ts";
import { ApiError, notFound } from "../errors.ts";
import { putSecretBody, secretName } from "../schemas.ts";
import { jsonBody } from "../validate.ts";

const SECRET_NAME_PARAM = { name: "The secret's name" };

function keyring(c: { var: AppEnv["Variables"] }): SecretsKeyring {
  const ring = c.var.deps.secretsKey;
  if (!ring)
    throw new ApiError(
      503,
      "secrets_unavailable",
      "this server has no FAIRWAY_SECRETS_KEY; set it (openssl rand -base64 32) and restart",
    );
  return ring;
}

function nameParam(raw: string): string {
  const r = secretName.safeParse(raw);
  if (!r.success) throw new ApiError(400, "validation_error", `secret name: ${r.error.issues[0]?.message}`);
  return r.data;
}

const secretJson = (s: SecretInfo) => ({ name: s.name, createdAt: s.createdAt, updatedAt: s.updatedAt });

export const secretRoutes = [
  route({
    method: "put",
    path: "/v1/secrets/:name",
    summary: "Create or replace a secret (name [A-Z][A-Z0-9_]{0,63}); targets use it as $" + "{secrets.NAME}",
    params: SECRET_NAME_PARAM,
    body: { name: "PutSecret", example: { value: "s3cret-value" } },
    ok: { status: 200, description: "The secret (never its value)", json: "Secret" },
    errors: [400, 503],
    handler: async (c) => {
      const name = nameParam(c.req.param("name"));
      const ring = keyring(c);
      const { value } = await jsonBody(c, putSecretBody);
      const tenantId = c.var.tenant.id;
      const sealed = await encryptSecret(ring, tenantId, name, value);
      const row = await putSecret(c.var.deps.db, tenantId, name, sealed, ring.current.id);
      c.var.log.info("secret stored", { name });
      return c.json(secretJson(row));
    },
  }),
  route({
    method: "get",
    path: "/v1/secrets",
    summary: "The tenant's secrets: names and times, never values",
    ok: { status: 200, description: "The secrets", json: "SecretList" },
    handler: async (c) => {
      const rows = await listSecrets(c.var.deps.db, c.var.tenant.id);
      return c.json({ data: rows.map(secretJson) });
    },
  }),
  route({
    method: "delete",
    path: "/v1/secrets/:name",
    summary: "Delete a secret (deliveries naming it then end secret_missing)",
    params: SECRET_NAME_PARAM,
    ok: { status: 204, description: "Deleted" },
    errors: [404],
    handler: async (c) => {
      const name = nameParam(c.req.param("name"));
      if (!(await deleteSecret(c.var.deps.db, c.var.tenant.id, name))) throw notFound("secret");
      c.var.log.info("secret deleted", { name });
      return c.body(null, 204);
    },
  }),
];

export const secretAdminRoutes = [
  /** After FAIRWAY_SECRETS_KEY changed (the old key now in FAIRWAY_SECRETS_KEY_PREVIOUS): re-seal every
   *  secret under the current key, in batches. Once `remaining` is 0 the previous key can be dropped. */
  route({
    method: "post",
    path: "/v1/admin/secrets/reencrypt",
    summary: "Re-seal every secret under FAIRWAY_SECRETS_KEY (after a rotation)",
    ok: { status: 200, description: "Counts", json: "Reencrypted" },
    errors: [503],
    handler: async (c) => {
      const ring = keyring(c);
      const db = c.var.deps.db;
      let resealed = 0;
      let failed = 0;
      for (;;) {
        const rows = await secretsNotSealedWith(db, ring.current.id, 100);
        const todo = rows.slice(failed);
        if (todo.length === 0) break;
        for (const row of todo) {
          let value: string;
          try {
            value = await decryptSecret(ring, row.tenantId, row.name, row.sealed);
          } catch {
            failed++; // sealed with a key we no longer have: reported, left as it is
            continue;
          }
          if (await resealSecret(db, row, await encryptSecret(ring, row.tenantId, row.name, value), ring.current.id))
            resealed++;
        }
        if (rows.length < 100) break;
      }
      c.var.log.info("secrets re-encrypted", { resealed, unreadable: failed });
      return c.json({ keyId: ring.current.id, reencrypted: resealed, unreadable: failed });
    },
  }),
];
