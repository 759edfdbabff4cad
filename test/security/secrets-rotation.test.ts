// Secrets key rotation, through the real API and the executor's resolver on real Postgres: secrets
// sealed under the old key keep delivering while it is FAIRWAY_SECRETS_KEY_PREVIOUS; the re-encrypt
// route re-seals them all under the new key, after which the old key can go.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createApp } from "@fairway/api";
import { createMemoryCoordinator } from "@fairway/coord";
import { generateSecretsKey, loadSecretsKeyring, type SecretsKeyring } from "@fairway/core";
import { SecretsKeyError } from "../../packages/core/src/secrets-crypto.ts";
import { secretResolver } from "../../packages/executor/src/secret-resolver.ts";
import { query, sql } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";

const ADMIN = "adm_rotation_test_token_0123456789";
let tdb: TestDb;

beforeAll(async () => {
  tdb = await createTestDb();
});
afterAll(async () => {
  await tdb?.drop();
});

function app(secretsKey: SecretsKeyring) {
  const a = createApp({
    db: tdb.store.db,
    coordinator: createMemoryCoordinator(),
    adminToken: ADMIN,
    allowPrivateTargets: true,
    apiRatePerSecond: 0,
    secretsKey,
  });
  return (method: string, path: string, token: string, body?: unknown) =>
    Promise.resolve(
      a.request(path, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
}

it("rotates the secrets key: previous key still opens, re-encrypt moves every secret to the new key", async () => {
  const oldKey = generateSecretsKey();
  const newKey = generateSecretsKey();
  const before = await loadSecretsKeyring(oldKey);
  const call = app(before);
  expect((await call("POST", "/v1/admin/tenants", ADMIN, { id: "rot", name: "rot" })).status).toBe(201);
  const { key } = (await (await call("POST", "/v1/admin/tenants/rot/keys", ADMIN)).json()) as { key: string };
  for (const [name, value] of [
    ["ONE", "v-one"],
    ["TWO", "v-two"],
  ]) {
    expect((await call("PUT", `/v1/secrets/${name}`, key, { value })).status).toBe(200);
  }
  const keyIds = async () =>
    (await query<{ key_id: string }>(tdb.store.db, sql`SELECT key_id FROM secrets ORDER BY name`)).map((r) => r.key_id);
  expect(await keyIds()).toEqual([before.current.id, before.current.id]);

  // Rotated: new key current, old key previous. Old rows still open.
  const rotated = await loadSecretsKeyring(newKey, oldKey);
  const open = secretResolver(tdb.store.db, rotated);
  expect(await open("rot", ["ONE", "TWO", "THREE"])).toEqual({
    values: new Map([
      ["ONE", "v-one"],
      ["TWO", "v-two"],
    ]),
    missing: ["THREE"],
  });
  // Without the previous key they would not.
  await expect(secretResolver(tdb.store.db, await loadSecretsKeyring(newKey))("rot", ["ONE"])).rejects.toThrow(
    SecretsKeyError,
  );

  const call2 = app(rotated);
  const res = await call2("POST", "/v1/admin/secrets/reencrypt", ADMIN);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ keyId: rotated.current.id, reencrypted: 2, unreadable: 0 });
  expect(await keyIds()).toEqual([rotated.current.id, rotated.current.id]);
  // Again: nothing left to do. And the tenant key cannot call it.
  expect(await (await call2("POST", "/v1/admin/secrets/reencrypt", ADMIN)).json()).toMatchObject({ reencrypted: 0 });
  expect((await call2("POST", "/v1/admin/secrets/reencrypt", key)).status).toBe(403);

  // The previous key is no longer needed.
  const after = secretResolver(tdb.store.db, await loadSecretsKeyring(newKey));
  expect((await after("rot", ["ONE", "TWO"])).values).toEqual(
    new Map([
      ["ONE", "v-one"],
      ["TWO", "v-two"],
    ]),
  );
});
