// Tenant secrets: PUT (create or replace), list (names only), DELETE. A value goes in once and never
// comes out of the API: it is sealed before it is stored and only the executor opens it, at delivery.
// The admin route re-seals every secret under the current key after a key rotation. The changes are
// commands (commands/secrets.ts).
import { listSecrets, type SecretInfo } from "@fairway/store";
import { deleteSecret, putSecret, reencryptSecrets } from "../commands/secrets.ts";
import { route } from "../route.ts";
import { rawJsonBody } from "../validate.ts";

const SECRET_NAME_PARAM = { name: "The secret's name" };

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
      const row = await putSecret(c.var, c.var.tenant.id, c.req.param("name"), await rawJsonBody(c));
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
      await deleteSecret(c.var, c.var.tenant.id, c.req.param("name"));
      return c.body(null, 204);
    },
  }),
];

export const secretAdminRoutes = [
  route({
    method: "post",
    path: "/v1/admin/secrets/reencrypt",
    summary: "Re-seal every secret under FAIRWAY_SECRETS_KEY (after a rotation)",
    ok: { status: 200, description: "Counts", json: "Reencrypted" },
    errors: [503],
    handler: async (c) => c.json(await reencryptSecrets(c.var)),
  }),
];
