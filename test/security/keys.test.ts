// API keys and scopes: random `fw_` keys, only a hash stored, revocation takes effect on the
// next request (within a second in another process), last use recorded, admin and tenant scopes never mix, and no plaintext key anywhere in
// a dump of the database, in the logs, or in any API response after creation.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { query, sql } from "@fairway/store";
import { PG_BASE_URL } from "../support/pg.ts";
import { until } from "../support/until.ts";
import { ADMIN_TOKEN, createHarness, type Harness } from "./harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.tdb.drop();
});

describe("API keys", () => {
  test("are random, prefixed fw_, and stored only as their sha256 hash", async () => {
    const a = await h.tenant("keys-a");
    const b = await h.tenant("keys-b");
    expect(a.key).toMatch(/^fw_[A-Za-z0-9_-]{40,}$/);
    expect(a.key).not.toBe(b.key);
    const rows = await query<{ hash: string; prefix: string }>(
      h.db,
      sql`SELECT hash, prefix FROM api_keys WHERE id = ${a.keyId}`,
    );
    expect(rows[0].hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].hash).not.toContain(a.key.slice(3));
    expect(a.key.startsWith(rows[0].prefix)).toBe(true);
    expect(rows[0].prefix.length).toBeLessThan(a.key.length / 3);
  });

  test("a revoked key is a 401 on the very next request; other keys keep working", async () => {
    const a = await h.tenant("revoke-a");
    const k2 = (await (await h.call("POST", "/v1/admin/tenants/revoke-a/keys")).json()) as { id: string; key: string };
    expect((await h.call("GET", "/v1/jobs", { token: a.key })).status).toBe(200);
    const del = await h.call("DELETE", `/v1/admin/tenants/revoke-a/keys/${a.keyId}`);
    expect(del.status).toBe(200);
    const after = await h.call("GET", "/v1/jobs", { token: a.key });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    expect((await h.call("GET", "/v1/jobs", { token: k2.key })).status).toBe(200);
    // Revoking again, or through another tenant's path, finds nothing.
    expect((await h.call("DELETE", `/v1/admin/tenants/revoke-a/keys/${a.keyId}`)).status).toBe(404);
    const b = await h.tenant("revoke-b");
    expect((await h.call("DELETE", `/v1/admin/tenants/revoke-b/keys/${k2.id}`)).status).toBe(404);
    expect((await h.call("GET", "/v1/jobs", { token: k2.key })).status).toBe(200);
    expect((await h.call("GET", "/v1/jobs", { token: b.key })).status).toBe(200);
  });

  test("a key revoked or a tenant suspended by another process is refused within a second", async () => {
    // Another API process of the deployment writes the database; this one read the key a moment ago.
    const a = await h.tenant("elsewhere-a");
    const b = await h.tenant("elsewhere-b");
    expect((await h.call("GET", "/v1/jobs", { token: a.key })).status).toBe(200);
    expect((await h.call("GET", "/v1/jobs", { token: b.key })).status).toBe(200);
    await query(h.db, sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${a.keyId}`);
    await query(h.db, sql`UPDATE tenants SET status = 'suspended' WHERE id = 'elsewhere-b'`);
    await until(
      () => h.call("GET", "/v1/jobs", { token: a.key }).then((r) => r.status),
      (s) => s === 401,
      5_000,
      "revoked key refused",
    );
    await until(
      () => h.call("GET", "/v1/jobs", { token: b.key }).then((r) => r.status),
      (s) => s === 403,
      5_000,
      "suspended tenant refused",
    );
  });

  test("last use is recorded", async () => {
    const a = await h.tenant("lastused");
    const before = await query<{ at: string | null }>(
      h.db,
      sql`SELECT last_used_at AS at FROM api_keys WHERE id = ${a.keyId}`,
    );
    expect(before[0].at).toBeNull();
    expect((await h.call("GET", "/v1/quota", { token: a.key })).status).toBe(200);
    const after = await query<{ at: string | null }>(
      h.db,
      sql`SELECT last_used_at AS at FROM api_keys WHERE id = ${a.keyId}`,
    );
    expect(after[0].at).not.toBeNull();
  });
});

describe("scopes never mix", () => {
  const adminRoutes: Array<[string, string]> = [
    ["GET", "/v1/admin/tenants"],
    ["POST", "/v1/admin/tenants"],
    ["GET", "/v1/admin/tenants/scope-a"],
    ["PATCH", "/v1/admin/tenants/scope-a"],
    ["POST", "/v1/admin/tenants/scope-a/keys"],
    ["DELETE", "/v1/admin/tenants/scope-a/keys/key_x"],
    ["POST", "/v1/admin/tenants/scope-a/signing-secret/rotate"],
    ["GET", "/v1/admin/pools"],
    ["GET", "/v1/admin/pools/webhook"],
    ["PUT", "/v1/admin/pools/webhook"],
    ["GET", "/v1/admin/stats"],
  ];
  const tenantRoutes: Array<[string, string]> = [
    ["POST", "/v1/jobs"],
    ["GET", "/v1/jobs"],
    ["GET", "/v1/jobs/job_x"],
    ["PATCH", "/v1/jobs/job_x"],
    ["DELETE", "/v1/jobs/job_x"],
    ["POST", "/v1/jobs/job_x/pause"],
    ["POST", "/v1/jobs/job_x/resume"],
    ["POST", "/v1/jobs/job_x/run"],
    ["GET", "/v1/jobs/job_x/triggers"],
    ["GET", "/v1/triggers/trg_x"],
    ["POST", "/v1/triggers/trg_x/replay"],
    ["GET", "/v1/dead-letters"],
    ["GET", "/v1/quota"],
  ];

  test("a tenant key on every admin route is a 403 and changes nothing", async () => {
    const a = await h.tenant("scope-a");
    const before = await h.counts();
    for (const [method, path] of adminRoutes) {
      const r = await h.call(method, path, { token: a.key, body: { name: "x", concurrency: 1, timeoutMs: 1000 } });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    }
    expect(await h.counts()).toEqual(before);
  });

  test("the admin token on every tenant route is a 403; no, bad, or revoked keys are 401", async () => {
    const a = await h.tenant("scope-b");
    await h.call("DELETE", `/v1/admin/tenants/scope-b/keys/${a.keyId}`);
    for (const [method, path] of tenantRoutes) {
      expect((await h.call(method, path, { token: ADMIN_TOKEN })).status, `${method} ${path}`).toBe(403);
      expect((await h.call(method, path, { token: null })).status).toBe(401);
      expect((await h.call(method, path, { token: a.key })).status).toBe(401);
      expect((await h.call(method, path, { token: `${a.key}x` })).status).toBe(401);
      expect((await h.call(method, path, { token: "fw_guess" })).status).toBe(401);
    }
    for (const [method, path] of adminRoutes) {
      expect((await h.call(method, path, { token: null })).status).toBe(401);
      expect((await h.call(method, path, { token: `${ADMIN_TOKEN}x` })).status).toBe(401);
      expect((await h.call(method, path, { token: a.key })).status).toBe(401); // revoked: not even recognised as a tenant key
    }
  });

  test("a suspended tenant's key is refused", async () => {
    const a = await h.tenant("scope-c");
    await h.call("PATCH", "/v1/admin/tenants/scope-c", { body: { status: "suspended" } });
    const r = await h.call("GET", "/v1/jobs", { token: a.key });
    expect(r.status).toBe(403);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("tenant_suspended");
  });
});

describe("secrets after creation", () => {
  test("no key or signing secret in any later API response or in the logs", async () => {
    const a = await h.tenant("secret-a");
    const later: string[] = [];
    for (const path of ["/v1/admin/tenants", "/v1/admin/tenants/secret-a", "/v1/admin/stats", "/v1/admin/pools"]) {
      later.push(await (await h.call("GET", path)).text());
    }
    later.push(await (await h.call("PATCH", "/v1/admin/tenants/secret-a", { body: { weight: 2 } })).text());
    later.push(await (await h.call("GET", "/v1/quota", { token: a.key })).text());
    later.push(await (await h.call("GET", "/metrics")).text());
    later.push(await (await h.call("GET", "/v1/metrics", { token: a.key })).text());
    for (const text of [...later, ...h.logs]) {
      expect(text).not.toContain(a.key);
      expect(text).not.toContain(a.key.slice(3, 20));
      expect(text).not.toContain(a.signingSecret.slice(6));
      expect(text).not.toContain(ADMIN_TOKEN);
    }
    expect(later.join("")).not.toMatch(/whsec_|fw_[A-Za-z0-9_-]{20}/);
  });

  test("a dump of the database contains no plaintext API key", async () => {
    const keys = [(await h.tenant("dump-a")).key, (await h.tenant("dump-b")).key];
    await h.call("GET", "/v1/jobs", { token: keys[0] });
    const u = new URL(PG_BASE_URL);
    const dump = execFileSync(
      "pg_dump",
      ["-h", u.hostname, "-p", u.port || "5432", "-U", u.username || "postgres", h.tdb.name],
      {
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    expect(dump).toContain("api_keys");
    expect(dump).toContain(keys[0].slice(0, 10)); // the display prefix is there: the dump did include the rows
    for (const key of keys) {
      expect(dump).not.toContain(key);
      expect(dump).not.toContain(key.slice(10)); // nor the secret part of it
    }
  });
});
