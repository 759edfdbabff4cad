// The quota admin API: changes take effect on the next claim; maxJobs and maxPayloadBytes are
// enforced at the API with stable codes; a suspended tenant's triggers wait and its calls are refused;
// rate quotas limit how fast triggers start (excess waits, is not dropped); quota, stats and pools.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "@fairway/api";
import { createMemoryCoordinator } from "@fairway/coord";
import { claim, connectPostgres, settle, sql, type Settlement } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { seedDue } from "../support/seed.ts";

const ADMIN = "admin-token-for-quota-tests";

describe("quota admin API", () => {
  let t: TestDb;
  let app: ReturnType<typeof createApp>;
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  const admin = (method: string, path: string, body?: unknown) => call(ADMIN, method, path, body);

  async function tenantWithKey(id: string, quotas: Record<string, unknown> = {}) {
    expect((await admin("POST", "/v1/admin/tenants", { id, name: id, ...quotas })).status).toBe(201);
    return (await admin("POST", `/v1/admin/tenants/${id}/keys`)).json.key as string;
  }
  const claimAll = (type: string) => claim(t.store.db, { type, budget: 100, owner: "q", leaseMs: 60_000 });
  const done = (c: Awaited<ReturnType<typeof claimAll>>): Settlement[] =>
    c.map((x) => ({
      id: x.id,
      leaseToken: x.leaseToken,
      attempt: x.attempt,
      status: "succeeded",
      startedAt: new Date(),
      durationMs: 1,
      outcome: "success",
    }));

  beforeAll(async () => {
    t = await createTestDb();
    app = createApp({
      db: t.store.db,
      coordinator: createMemoryCoordinator(),
      adminToken: ADMIN,
      allowPrivateTargets: true,
    });
  });
  afterAll(async () => t?.drop());

  it("reads and patches quotas; a new cap applies on the next claim", async () => {
    await tenantWithKey("cap", { maxInFlight: 2, weight: 3 });
    expect((await admin("GET", "/v1/admin/tenants/cap")).json).toMatchObject({
      maxInFlight: 2,
      weight: 3,
      status: "active",
    });
    await seedDue(t.store.db, "cap", 10, { type: "capq" });
    expect(await claimAll("capq")).toHaveLength(2);
    const patched = await admin("PATCH", "/v1/admin/tenants/cap", { maxInFlight: 5 });
    expect(patched.json.maxInFlight).toBe(5);
    expect(await claimAll("capq")).toHaveLength(3);
    expect((await admin("PATCH", "/v1/admin/tenants/cap", { maxInFlight: 0 })).json.error.code).toBe(
      "validation_error",
    );
    expect((await admin("PATCH", "/v1/admin/tenants/nope", { weight: 2 })).status).toBe(404);
  });

  it("enforces maxJobs (409) and maxPayloadBytes (413) and writes nothing", async () => {
    const key = await tenantWithKey("small", { maxJobs: 1, maxPayloadBytes: 100 });
    const job = (payload: unknown) => ({
      name: "j",
      schedule: { delayMs: 60_000 },
      target: { url: "http://127.0.0.1:1/x" },
      payload,
    });
    expect((await call(key, "POST", "/v1/jobs", job({ a: "x".repeat(200) }))).json.error.code).toBe(
      "payload_too_large",
    );
    expect((await call(key, "POST", "/v1/jobs", job({ a: 1 }))).status).toBe(201);
    const over = await call(key, "POST", "/v1/jobs", job({ a: 2 }));
    expect([over.status, over.json.error.code]).toEqual([409, "max_jobs_exceeded"]);
    expect((await call(key, "GET", "/v1/jobs")).json.data).toHaveLength(1);
    expect((await call(key, "GET", "/v1/quota")).json).toMatchObject({
      limits: { maxJobs: 1, maxPayloadBytes: 100 },
      usage: { jobs: 1, pending: 1 },
    });
  });

  it("maxJobs holds under 30 concurrent creates, and cancelled or completed jobs free their slots", async () => {
    const key = await tenantWithKey("race", { maxJobs: 10 });
    const job = (i: number) => ({
      name: `j${i}`,
      schedule: { delayMs: 3_600_000 },
      target: { url: "http://127.0.0.1:1/x" },
    });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => call(key, "POST", "/v1/jobs", job(i))));
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    expect(results.filter((r) => r.status === 409 && r.json.error.code === "max_jobs_exceeded")).toHaveLength(20);
    const ids = results.filter((r) => r.status === 201).map((r) => r.json.id as string);
    expect((await call(key, "GET", "/v1/jobs?limit=200")).json.data).toHaveLength(10);
    // Cancelling one frees exactly one slot.
    expect((await call(key, "DELETE", `/v1/jobs/${ids[0]}`)).status).toBe(200);
    expect((await call(key, "POST", "/v1/jobs", job(100))).status).toBe(201);
    expect((await call(key, "POST", "/v1/jobs", job(101))).status).toBe(409);
    // Cancelling an already-cancelled job frees nothing more.
    await call(key, "DELETE", `/v1/jobs/${ids[0]}`);
    expect((await call(key, "POST", "/v1/jobs", job(102))).status).toBe(409);
    // A one-time job that completes frees its slot: run and settle ids[1]'s trigger.
    await t.store.db.execute(
      sql`UPDATE triggers SET next_attempt_at = now() - interval '1 second' WHERE job_id = ${ids[1]}`,
    );
    const [c] = await claim(t.store.db, { type: "webhook", budget: 10, owner: "q", leaseMs: 60_000 });
    expect(c.jobId).toBe(ids[1]);
    await settle(t.store.db, done([c]));
    expect((await call(key, "GET", `/v1/jobs/${ids[1]}`)).json.status).toBe("completed");
    expect((await call(key, "POST", "/v1/jobs", job(103))).status).toBe(201);
    expect((await call(key, "GET", "/v1/quota")).json.usage.jobs).toBe(10);
  });

  it("50 concurrent first creates of a fresh tenant all succeed (the live-jobs counter starts under a race)", async () => {
    // Several fresh tenants, each with 50 creates truly in parallel (30 connections of its own).
    const wide = connectPostgres(t.url, { max: 30 });
    const wideApp = createApp({
      db: wide.db,
      coordinator: createMemoryCoordinator(),
      adminToken: ADMIN,
      allowPrivateTargets: true,
    });
    try {
      for (let n = 0; n < 4; n++) {
        const key = await tenantWithKey(`fresh${n}`);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            wideApp.request("/v1/jobs", {
              method: "POST",
              headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
              body: JSON.stringify({
                name: `f${i}`,
                schedule: { delayMs: 3_600_000 },
                target: { url: "http://127.0.0.1:1/x" },
              }),
            }),
          ),
        );
        expect(results.map((r) => r.status).filter((s) => s !== 201)).toEqual([]);
        expect((await call(key, "GET", "/v1/quota")).json.usage.jobs).toBe(50);
      }
    } finally {
      await wide.close();
    }
  });

  it("a suspended tenant's triggers wait and its API calls are refused; resuming releases them", async () => {
    const key = await tenantWithKey("sus");
    await seedDue(t.store.db, "sus", 3, { type: "susq" });
    await admin("PATCH", "/v1/admin/tenants/sus", { status: "suspended" });
    expect(await claimAll("susq")).toHaveLength(0);
    const refused = await call(key, "GET", "/v1/jobs");
    expect([refused.status, refused.json.error.code]).toEqual([403, "tenant_suspended"]);
    await admin("PATCH", "/v1/admin/tenants/sus", { status: "active" });
    expect(await claimAll("susq")).toHaveLength(3);
  });

  it("a rate quota limits how fast triggers start; the excess waits", async () => {
    await tenantWithKey("slow", { ratePerSecond: 0.01, burst: 4, maxInFlight: 100 });
    await seedDue(t.store.db, "slow", 10, { type: "rateq" });
    const first = await claimAll("rateq");
    expect(first).toHaveLength(4);
    await settle(t.store.db, done(first));
    expect(await claimAll("rateq")).toHaveLength(0);
    const quota = await admin("GET", "/v1/admin/stats");
    expect(quota.json.tenants.find((x: any) => x.tenantId === "slow")).toMatchObject({ due: 6, running: 0 });
    // Raising the quota applies on the next claim (the bucket restarts full at the new burst).
    await admin("PATCH", "/v1/admin/tenants/slow", { ratePerSecond: 1000, burst: 100 });
    expect(await claimAll("rateq")).toHaveLength(6);
  });

  it("pools: read defaults, set concurrency/timeout, reject a lease shorter than the timeout", async () => {
    expect((await admin("GET", "/v1/admin/pools/emails")).json).toMatchObject({ type: "emails", concurrency: 50 });
    const put = await admin("PUT", "/v1/admin/pools/emails", { concurrency: 7, timeoutMs: 5000 });
    expect(put.json).toMatchObject({ concurrency: 7, timeoutMs: 5000 });
    expect(put.json.leaseMs).toBeGreaterThan(5000);
    expect((await admin("GET", "/v1/admin/pools/emails")).json.concurrency).toBe(7);
    const bad = await admin("PUT", "/v1/admin/pools/emails", { concurrency: 7, timeoutMs: 5000, leaseMs: 5000 });
    expect([bad.status, bad.json.error.code]).toEqual([400, "validation_error"]);
  });
});
