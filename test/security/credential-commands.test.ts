// Secrets, API keys, signing secrets and portal sessions change through the command layer
// (packages/api/src/commands): the routes and the dashboard reach the same checks and messages, and a
// refusal writes nothing (every table's row count is unchanged).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createLogger, generateSecretsKey, loadSecretsKeyring } from "@fairway/core";
import { createMemoryCoordinator } from "@fairway/coord";
import { ApiError } from "../../packages/api/src/errors.ts";
import { resolveDeps } from "@fairway/api";
import { query, sql } from "@fairway/store";
import { putSecret } from "../../packages/api/src/commands/secrets.ts";
import { ADMIN_TOKEN as ADMIN, createHarness, type Harness } from "./harness.ts";

let h: Harness;
let plain: Harness; // a server without FAIRWAY_SECRETS_KEY
beforeAll(async () => {
  [h, plain] = await Promise.all([
    createHarness({ secretsKey: await loadSecretsKeyring(generateSecretsKey()) }),
    createHarness(),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.tdb.drop(), plain?.tdb.drop()]);
});

const errorOf = async (r: Response) => ((await r.json()) as { error: { code: string; message: string } }).error;

describe("secrets", () => {
  test("a bad name, a bad value or no secrets key is refused with its code, and nothing is stored", async () => {
    const t = await h.tenant("sec");
    const before = await h.counts();
    const put = (name: string, body: unknown) => h.call("PUT", `/v1/secrets/${name}`, { token: t.key, body });
    for (const [name, body, code] of [
      ["lower_case", { value: "v" }, "validation_error"],
      ["1LEADING_DIGIT", { value: "v" }, "validation_error"],
      ["GOOD", { value: "" }, "validation_error"],
      ["GOOD", { value: "x".repeat(8193) }, "validation_error"],
      ["GOOD", { value: "v", extra: 1 }, "validation_error"],
      ["GOOD", { value: 42 }, "validation_error"],
    ] as const) {
      const r = await put(name, body);
      expect(r.status, `${name} ${JSON.stringify(body).slice(0, 40)}`).toBe(400);
      expect((await errorOf(r)).code).toBe(code);
    }
    const del = await h.call("DELETE", "/v1/secrets/NOT_THERE", { token: t.key });
    expect(del.status).toBe(404);
    expect((await errorOf(del)).code).toBe("not_found");
    expect(await h.counts()).toEqual(before);

    const p = await plain.tenant("sec");
    const plainBefore = await plain.counts();
    const refused = await plain.call("PUT", "/v1/secrets/GOOD", { token: p.key, body: { value: "v" } });
    expect(refused.status).toBe(503);
    expect((await errorOf(refused)).code).toBe("secrets_unavailable");
    const reencrypt = await plain.call("POST", "/v1/admin/secrets/reencrypt");
    expect(reencrypt.status).toBe(503);
    expect(await plain.counts()).toEqual(plainBefore);

    // The command the routes call refuses the same input with the same code and message.
    const deps = resolveDeps({
      db: h.db,
      coordinator: createMemoryCoordinator(),
      adminToken: ADMIN,
      allowPrivateTargets: false,
      secretsKey: await loadSecretsKeyring(generateSecretsKey()),
    });
    const ctx = { deps, log: createLogger({ level: "error", write: () => {} }) };
    const direct = await putSecret(ctx, t.id, "lower_case", { value: "v" }).catch((e: unknown) => e);
    expect(direct).toBeInstanceOf(ApiError);
    const viaRoute = await errorOf(await put("lower_case", { value: "v" }));
    expect({ code: (direct as ApiError).code, message: (direct as ApiError).message }).toEqual(viaRoute);
    expect(await h.counts()).toEqual(before);

    // What is accepted is stored once, and deleted once.
    expect((await put("GOOD", { value: "v" })).status).toBe(200);
    expect((await h.call("DELETE", "/v1/secrets/GOOD", { token: t.key })).status).toBe(204);
    expect((await h.call("DELETE", "/v1/secrets/GOOD", { token: t.key })).status).toBe(404);
  });
});

describe("API keys", () => {
  test("issuing for no tenant and revoking a key the tenant lacks are 404s that change nothing", async () => {
    const a = await h.tenant("keys-a");
    const b = await h.tenant("keys-b");
    const before = await h.counts();
    const issued = await h.call("POST", "/v1/admin/tenants/nope/keys");
    expect(issued.status).toBe(404);
    expect((await errorOf(issued)).code).toBe("not_found");
    // b's key named under a: refused, and b's key keeps working.
    const crossed = await h.call("DELETE", `/v1/admin/tenants/keys-a/keys/${b.keyId}`);
    expect(crossed.status).toBe(404);
    expect((await h.call("DELETE", "/v1/admin/tenants/keys-a/keys/key_unknown")).status).toBe(404);
    expect(await h.counts()).toEqual(before);
    expect((await h.call("GET", "/v1/jobs", { token: b.key })).status).toBe(200);

    // Rotation: a new key works at once; the old one is refused once revoked, and only once.
    const next = (await (await h.call("POST", "/v1/admin/tenants/keys-a/keys")).json()) as { key: string };
    expect((await h.call("GET", "/v1/jobs", { token: next.key })).status).toBe(200);
    const revoked = await h.call("DELETE", `/v1/admin/tenants/keys-a/keys/${a.keyId}`);
    expect(await revoked.json()).toEqual({ id: a.keyId, revoked: true });
    expect((await h.call("GET", "/v1/jobs", { token: a.key })).status).toBe(401);
    expect((await h.call("GET", "/v1/jobs", { token: next.key })).status).toBe(200);
    expect((await h.call("DELETE", `/v1/admin/tenants/keys-a/keys/${a.keyId}`)).status).toBe(404);
  });
});

describe("signing secrets and portal sessions", () => {
  test("for no tenant, the API and the dashboard both answer 404 and change nothing", async () => {
    await h.tenant("portal-x");
    const before = await h.counts();
    expect((await h.call("POST", "/v1/admin/tenants/nope/signing-secret/rotate")).status).toBe(404);
    expect((await h.call("POST", "/v1/admin/tenants/nope/portal-sessions/revoke")).status).toBe(404);

    // The dashboard's revoke form, signed in as the operator.
    const login = await h.app.request("/dashboard/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: ADMIN }).toString(),
    });
    expect(login.status).toBe(303);
    const cookie = login.headers.get("set-cookie")!.split(";")[0];
    const html = await (await h.app.request("/dashboard/admin", { headers: { cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    expect(csrf).toBeTruthy();
    const revoke = (tenant: string) =>
      h.app.request(`/dashboard/admin/tenants/${tenant}/portal-sessions/revoke`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf: csrf! }).toString(),
      });
    expect((await revoke("nope")).status).toBe(404);
    expect(await h.counts()).toEqual(before);

    const epoch = async () =>
      (await query<{ e: number }>(h.db, sql`SELECT portal_epoch AS e FROM tenants WHERE id = 'portal-x'`))[0].e;
    const was = await epoch();
    const done = await revoke("portal-x");
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/dashboard/admin/tenants/portal-x");
    expect(await epoch()).toBe(was + 1);
  });
});
