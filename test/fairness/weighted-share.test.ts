// Weighted fair share of worker time (docs/architecture.md): always-backlogged tenants with weights
// 1:2:5 receive pool capacity in proportion — by count when jobs are equal, and by WORKER TIME when
// one tenant's jobs are 10× longer (it must not get 10× the workers).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { seedDue, seedTenant } from "../support/seed.ts";
import { shares, simulatePool } from "./simulate.ts";

const ids = ["w1", "w2", "w5"];
const weights = [1, 2, 5];
const ideal = weights.map((w) => w / 8);

describe("weighted fair share", () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => t?.drop());

  async function setup(type: string) {
    for (const [i, id] of ids.entries()) {
      await seedTenant(t.store.db, `${type}-${id}`, { maxInFlight: 1000, weight: weights[i] });
      await seedDue(t.store.db, `${type}-${id}`, 3000, { type });
    }
    return ids.map((id) => `${type}-${id}`);
  }

  /** 2,000 completions of equal 100 ms jobs in a 40-slot pool. */
  const equalJobs = (type: string) =>
    simulatePool(t.store.db, {
      type,
      capacity: 40,
      durationMs: () => 100,
      stopAfter: (s) => [...s.count.values()].reduce((a, b) => a + b, 0) >= 2000,
    });

  it("splits counts 1:2:5 within 5% when jobs are equal", async () => {
    const tenants = await setup("eq");
    const got = shares((await equalJobs("eq")).count, tenants);
    console.info(
      `weights 1:2:5 equal jobs: count shares ${got.map((x) => x.toFixed(4)).join(" ")} (ideal ${ideal.join(" ")})`,
    );
    for (const [i, s] of got.entries()) expect(Math.abs(s - ideal[i]) / ideal[i]).toBeLessThan(0.05);
  });

  it("splits WORKER TIME 1:2:5 within 5% when the weight-5 tenant's jobs are 10x longer", async () => {
    const tenants = await setup("long");
    const r = await simulatePool(t.store.db, {
      type: "long",
      capacity: 40,
      durationMs: (id) => (id.endsWith("w5") ? 1000 : 100),
      stopAfter: (s) => [...s.time.values()].reduce((a, b) => a + b, 0) >= 400_000,
    });
    const got = shares(r.time, tenants);
    console.info(`weights 1:2:5, 10x jobs for w5: time shares ${got.map((x) => x.toFixed(4)).join(" ")}`);
    for (const [i, s] of got.entries()) expect(Math.abs(s - ideal[i]) / ideal[i]).toBeLessThan(0.05);
    // By count the long-job tenant gets far fewer runs than its weight would give equal jobs.
    const counts = shares(r.count, tenants);
    expect(counts[2]).toBeLessThan(ideal[2] / 2);
  });

  it("gives a dominant tenant its share too: weights 1:1:18 split counts within 5%", async () => {
    // Each claim looks at a bounded part of each backlog (dueScanCap). Bounded by twice an EVEN share,
    // a tenant owed 90 % could take at most two thirds of any claim over three tenants.
    const w = [1, 1, 18];
    const tenants = ["a", "b", "big"].map((x) => `skew-${x}`);
    for (const [i, id] of tenants.entries()) {
      await seedTenant(t.store.db, id, { maxInFlight: 1000, weight: w[i] });
      await seedDue(t.store.db, id, 3000, { type: "skew" });
    }
    const got = shares((await equalJobs("skew")).count, tenants);
    console.info(`weights 1:1:18 equal jobs: count shares ${got.map((x) => x.toFixed(4)).join(" ")}`);
    for (const [i, s] of got.entries()) expect(Math.abs(s - w[i] / 20) / (w[i] / 20)).toBeLessThan(0.05);
  });
});
