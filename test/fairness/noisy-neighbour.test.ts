// Noisy neighbour: one tenant with a 20k backlog must not delay small tenants' triggers by
// more than a small constant number of claim cycles, compared with the same small tenants alone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { seedDue, seedTenant } from "../support/seed.ts";
import { simulatePool } from "./simulate.ts";

const SMALL = Array.from({ length: 5 }, (_, i) => `small${i}`);

describe("noisy neighbour", () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => t?.drop());

  async function run(type: string, withNoisy: boolean) {
    const db = t.store.db;
    if (withNoisy) {
      await seedTenant(db, `${type}-noisy`, { maxInFlight: 50 });
      // The backlog is older than the small tenants' work: FIFO would run all of it first.
      await seedDue(db, `${type}-noisy`, 20_000, { type, at: new Date(Date.now() - 3_600_000) });
    }
    for (const s of SMALL) {
      await seedTenant(db, `${type}-${s}`, { maxInFlight: 50 });
      await seedDue(db, `${type}-${s}`, 100, { type });
    }
    const small = SMALL.map((s) => `${type}-${s}`);
    const r = await simulatePool(db, {
      type,
      capacity: 50,
      durationMs: () => 10,
      stopAfter: (res) => small.every((s) => (res.count.get(s) ?? 0) >= 100),
    });
    return Math.max(...small.map((s) => r.lastCycle.get(s) ?? Infinity));
  }

  it("small tenants finish within a small constant number of extra claim cycles", async () => {
    const alone = await run("alone", false);
    const noisy = await run("noisy", true);
    // Alone: 500 triggers / 50 slots = 10 cycles. With the noisy tenant as a 6th equal-weight tenant
    // they get 5/6 of the pool: about 12 cycles. FIFO would need 400+ cycles to drain the backlog first.
    console.info(
      `noisy neighbour: small tenants done by claim cycle ${noisy} with a 20k-backlog tenant, ${alone} alone`,
    );
    expect(alone).toBeLessThanOrEqual(11);
    expect(noisy).toBeLessThanOrEqual(alone + 4);
  }, 60_000);
});
