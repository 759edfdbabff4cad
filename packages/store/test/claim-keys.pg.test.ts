// The keyed claim (claim-keys.ts, keyedIds): a keyed tenant's slots go to its keys by their weighted share,
// each key within its cap and rate; counts stay exact through claim, settle, release and cancel.
import { describe, expect, it } from "vitest";
import {
  LAYOUT_NAMES,
  ALL_TENANTS,
  claim,
  putKeyOverride,
  query,
  releaseLeases,
  setKeyDefaults,
  settle,
  sql,
  type ClaimedTrigger,
} from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { seedDue, seedPool, seedTenant, succeeded } from "../../../test/support/seed.ts";

// Both layouts, on plain PostgreSQL (store.pg.test.ts).
describe.each(LAYOUT_NAMES)("%s layout", (layout) => {
  const pg = useTestDb({ layout });

  const claimOf = (type: string, budget: number) => claim(pg.db, { type, budget, owner: "t", leaseMs: 60_000 });
  const count = (got: ClaimedTrigger[]) => {
    const m: Record<string, number> = {};
    for (const g of got) m[g.key ?? "-"] = (m[g.key ?? "-"] ?? 0) + 1;
    return m;
  };

  it("a key's cap is never passed and a freed key slot is claimed again; other keys take the rest", async () => {
    await seedPool(pg.db, "kc", 50);
    await seedTenant(pg.db, "capped", { maxInFlight: 100 });
    await setKeyDefaults(pg.db, "capped", { maxInFlight: 2, ratePerSecond: null, weight: 1 });
    await putKeyOverride(pg.db, "capped", "wide", { maxInFlight: null });
    await seedDue(pg.db, "capped", 20, { type: "kc", key: "a" });
    await seedDue(pg.db, "capped", 20, { type: "kc", key: "b" });
    await seedDue(pg.db, "capped", 5, { type: "kc", key: "wide" });

    const first = await claimOf("kc", 50);
    expect(count(first)).toEqual({ a: 2, b: 2, wide: 5 });
    // Those that took a key to its cap say so: their settle frees a slot a key waits for.
    expect(
      first
        .filter((c) => c.atCap)
        .map((c) => c.key)
        .sort(),
    ).toEqual(["a", "a", "b", "b"]);
    expect(await claimOf("kc", 50)).toEqual([]);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);

    const a = first.filter((c) => c.key === "a");
    await settle(pg.db, [succeeded(a[0])]);
    const b = first.filter((c) => c.key === "b");
    expect(await releaseLeases(pg.db, [{ id: b[0].id, leaseToken: b[0].leaseToken }], ALL_TENANTS)).toBe(1);
    const again = await claimOf("kc", 50);
    expect(count(again)).toEqual({ a: 1, b: 1 });
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);

    // A running trigger cancelled by hand frees its key's slot too.
    await pg.db.execute(sql`UPDATE triggers SET status = 'cancelled' WHERE id = ${a[1].id}`);
    expect(count(await claimOf("kc", 50))).toEqual({ a: 1 });
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });

  it("keys share a tenant's slots by weight, in key-slot order within each claim", async () => {
    await seedPool(pg.db, "kw", 50);
    await seedTenant(pg.db, "weighted", { maxInFlight: 1000 });
    await putKeyOverride(pg.db, "weighted", "heavy", { weight: 3 });
    await seedDue(pg.db, "weighted", 100, { type: "kw", key: "light" });
    await seedDue(pg.db, "weighted", 100, { type: "kw", key: "heavy" });

    const got = await claimOf("kw", 40);
    expect(count(got)).toEqual({ light: 10, heavy: 30 });
    // Every prefix of the claim's order is within one slot of 1:3.
    let heavy = 0;
    got.forEach((g, i) => {
      if (g.key === "heavy") heavy++;
      expect(Math.abs(heavy - ((i + 1) * 3) / 4)).toBeLessThanOrEqual(1);
    });
    // Settled at the estimate, the next claims go on at 1:3.
    await settle(
      pg.db,
      got.map((g) => succeeded(g, { durationMs: 100 })),
    );
    const next = await claimOf("kw", 40);
    expect(count(next)).toEqual({ light: 10, heavy: 30 });
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });

  it("a key back from idle starts at the least backlogged key's virtual time, with no banked credit", async () => {
    await seedPool(pg.db, "ki", 50);
    await seedTenant(pg.db, "idle", { maxInFlight: 1000 });
    await seedDue(pg.db, "idle", 200, { type: "ki", key: "old" });
    for (let i = 0; i < 4; i++) {
      const got = await claimOf("ki", 20);
      await settle(
        pg.db,
        got.map((g) => succeeded(g, { durationMs: 100 })),
      );
    }
    await seedDue(pg.db, "idle", 50, { type: "ki", key: "new" });
    const [{ vold, vnew }] = await query<{ vold: number; vnew: number }>(
      pg.db,
      sql`SELECT (SELECT vtime FROM tenant_keys WHERE tenant_id = 'idle' AND key = 'old') AS vold,
               (SELECT vtime FROM tenant_keys WHERE tenant_id = 'idle' AND key = 'new') AS vnew`,
    );
    expect(vnew).toBe(vold);
    expect(count(await claimOf("ki", 20))).toEqual({ old: 10, new: 10 });
  });

  // The keyed and unkeyed split of a claim over two tenants is the single-node claim statement's: the
  // per-tenant layout's store-level claim gives each tenant an even share first, where a tenant alone
  // spends the whole of it on its key (both statements agree on that: claim-tenant.pg.test.ts).
  it.skipIf(layout !== "single")(
    "a tenant's jobs without a key still run beside its keys; a tenant without keys is not touched",
    async () => {
      await seedPool(pg.db, "km", 50);
      await seedTenant(pg.db, "mixed", { maxInFlight: 1000 });
      await seedTenant(pg.db, "plain", { maxInFlight: 1000 });
      await seedDue(pg.db, "mixed", 30, { type: "km", key: "k" });
      await seedDue(pg.db, "mixed", 30, { type: "km" });
      await seedDue(pg.db, "plain", 30, { type: "km" });
      const got = await claimOf("km", 40);
      const mixed = got.filter((g) => g.tenantId === "mixed");
      expect(mixed.length).toBe(20);
      expect(count(mixed)).toEqual({ k: 10, "-": 10 });
      expect(got.filter((g) => g.tenantId === "plain").length).toBe(20);
      expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
      const [{ n }] = await query<{ n: number }>(
        pg.db,
        sql`SELECT count(*)::int AS n FROM tenant_keys WHERE tenant_id = 'plain'`,
      );
      expect(n).toBe(0);
    },
  );

  it("a key's rate limits its claims as a tenant's does", async () => {
    await seedPool(pg.db, "kr", 50);
    await seedTenant(pg.db, "rated", { maxInFlight: 1000 });
    await putKeyOverride(pg.db, "rated", "slow", { ratePerSecond: 3 });
    await seedDue(pg.db, "rated", 30, { type: "kr", key: "slow" });
    await seedDue(pg.db, "rated", 30, { type: "kr", key: "fast" });
    const got = await claimOf("kr", 40);
    // A full bucket of 3 for the slow key; the fast one takes the rest.
    expect(count(got)).toEqual({ slow: 3, fast: 30 });
    expect(count(await claimOf("kr", 40)).slow ?? 0).toBeLessThanOrEqual(1);
  });
});
