// Hardening (issue 45), in-process: numeric settings are bounded where they are accepted and a value
// stored out of range cannot stop other tenants' claims; merge patches refuse unknown and prototype
// keys; headers the transport cannot send are refused; failed credentials are limited per address.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { claim, settle, sql, type Settlement } from "@fairway/store";
import { seedDue, seedTenant } from "../support/seed.ts";
import { createHarness, type Harness } from "./harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.tdb.drop();
});

const errorOf = async (r: Response) => ((await r.json()) as { error: { code: string; message: string } }).error;

describe("finding 1: numeric settings are bounded, and a stored extreme cannot stop the claim", () => {
  test("the API refuses weights and rates outside their bounds with 400, and stores nothing", async () => {
    await h.tenant("bounded");
    const before = await h.counts();
    for (const body of [
      { weight: 5e-324 },
      { weight: 0 },
      { weight: 1001 },
      { ratePerSecond: 5e-324 },
      { ratePerSecond: 100_001 },
      { burst: 0 },
      { maxInFlight: 0 },
      { maxInFlight: 1.5 },
    ]) {
      const r = await h.call("PATCH", "/v1/admin/tenants/bounded", { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(r)).code).toBe("validation_error");
    }
    const created = await h.call("POST", "/v1/admin/tenants", { body: { name: "x", weight: 5e-324 } });
    expect(created.status).toBe(400);
    expect(await h.counts()).toEqual(before);
    // The bounds themselves are accepted.
    const ok = await h.call("PATCH", "/v1/admin/tenants/bounded", {
      body: { weight: 0.01, ratePerSecond: 0.01 },
    });
    expect(ok.status).toBe(200);
    expect((await h.call("PATCH", "/v1/admin/tenants/bounded", { body: { weight: 1000 } })).status).toBe(200);
  });

  test("a weight and rate forced out of range in the database do not fail the claim for everyone", async () => {
    const db = h.db;
    await seedTenant(db, "extreme");
    await seedTenant(db, "bystander");
    await seedDue(db, "extreme", 3, { type: "clamp" });
    const { triggerIds } = await seedDue(db, "bystander", 3, { type: "clamp" });
    await db.execute(sql`UPDATE tenants SET weight = 5e-324, rate_per_second = 5e-324 WHERE id = 'extreme'`);
    await db.execute(sql`UPDATE tenants SET weight = 'Infinity' WHERE id = 'bystander'`);
    const got = await claim(db, { type: "clamp", budget: 10, owner: "t", leaseMs: 60_000 });
    expect(
      got
        .filter((c) => c.tenantId === "bystander")
        .map((c) => c.id)
        .sort(),
    ).toEqual([...triggerIds].sort());
    const done: Settlement[] = got.map((c) => ({
      id: c.id,
      leaseToken: c.leaseToken,
      attempt: c.attempt,
      status: "succeeded",
      startedAt: new Date(),
      durationMs: 5,
      outcome: "success",
    }));
    await settle(db, done);
    // And the next claim still works.
    await db.execute(sql`UPDATE tenants SET weight = 'NaN', rate_per_second = 'NaN' WHERE id = 'extreme'`);
    await claim(db, { type: "clamp", budget: 10, owner: "t", leaseMs: 60_000 });
  });
});
