// The fair-share ledger under a race (claim.ts, "charge"): a settle's worker-time correction that
// commits while a claim is running must survive the claim's charge. The claim reads a tenant's vtime
// at its start and charges it at its end; a settle does not take the tenant lock, so it can correct the
// same row in between. Here a transaction stands in for that settle: it holds the row, the claim is
// seen waiting on it, then the correction commits.
import { describe, expect, it } from "vitest";
import postgres from "postgres";
import { LAYOUT_NAMES, claim, query, settle, sql } from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { seedDue, seedPool, seedTenant } from "../../../test/support/seed.ts";
import { until } from "../../../test/support/until.ts";

// Both layouts, on plain PostgreSQL (store.pg.test.ts).
describe.each(LAYOUT_NAMES)("%s layout", (layout) => {
  const pg = useTestDb({ layout });

  const vtime = async (tenantId: string) =>
    (
      await query<{ v: number }>(
        pg.db,
        sql`SELECT vtime AS v FROM tenant_pools WHERE tenant_id = ${tenantId} AND type = 'race'`,
      )
    )[0].v;

  /** Runs `correction` in a transaction on another connection and holds it; starts a claim, waits until
   *  the claim waits on a lock the correction holds (the only session of the database that can wait
   *  on one: the layouts' claim statements differ), then commits it. The claim's result. */
  async function claimWhileHeld(
    correction: (tx: postgres.TransactionSql) => Promise<unknown>,
    input: Parameters<typeof claim>[1],
  ): Promise<Awaited<ReturnType<typeof claim>>> {
    const other = postgres(pg.t.url, { max: 1, onnotice: () => {} });
    let commit!: () => void;
    const committing = new Promise<void>((r) => (commit = r));
    try {
      let held!: () => void;
      const holding = new Promise<void>((r) => (held = r));
      const correcting = other.begin(async (tx) => {
        await correction(tx);
        held();
        await committing;
      });
      await holding;
      const claiming = claim(pg.db, input);
      await until(
        async () =>
          (
            await query<{ n: number }>(
              pg.db,
              sql`SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          )[0].n,
        (n) => n === 1,
        10_000,
      );
      commit();
      await correcting;
      return await claiming;
    } finally {
      commit();
      await other.end();
    }
  }

  it("keeps a correction that commits while a claim of the same tenant is charging", async () => {
    await seedTenant(pg.db, "tn_race", { maxInFlight: 100, weight: 2 });
    await seedPool(pg.db, "race", 50);
    await seedDue(pg.db, "tn_race", 4, { type: "race" });
    await pg.db.execute(
      sql`INSERT INTO tenant_pools (tenant_id, type, vtime, cost_ms) VALUES ('tn_race', 'race', 10, 100)`,
    );
    // The claim has read vtime 10 and waits to charge the row the correction holds.
    const got = await claimWhileHeld(
      (tx) => tx`UPDATE tenant_pools SET vtime = vtime + 1000 WHERE tenant_id = 'tn_race' AND type = 'race'`,
      { type: "race", budget: 10, owner: "race-test", leaseMs: 60_000 },
    );
    expect(got).toHaveLength(4);
    // 10 + the correction + this claim's charge (4 runs × 100 ms ÷ weight 2).
    expect(await vtime("tn_race")).toBe(10 + 1000 + 200);
  });

  it("charges exactly as before when nothing races: from the pool clock for a tenant back from idle", async () => {
    await seedTenant(pg.db, "tn_idle", { maxInFlight: 100 });
    await seedDue(pg.db, "tn_idle", 3, { type: "race" });
    await pg.db.execute(
      sql`INSERT INTO tenant_pools (tenant_id, type, vtime, cost_ms) VALUES ('tn_idle', 'race', 5, 100)`,
    );
    await pg.db.execute(sql`UPDATE pools SET vclock = 500 WHERE type = 'race'`);
    const got = await claim(pg.db, { type: "race", budget: 10, owner: "race-test", leaseMs: 60_000 });
    expect(got).toHaveLength(3);
    // vstart = max(5, 500); three runs × 100 ms ÷ weight 1.
    expect(await vtime("tn_idle")).toBe(800);
  });

  const keyRow = async (tenantId: string, key: string) =>
    (
      await query<{ vtime: number; vcorr: number; running: number }>(
        pg.db,
        sql`SELECT vtime, vcorr, running FROM tenant_keys WHERE tenant_id = ${tenantId} AND key = ${key}`,
      )
    )[0];

  it("a key's settle correction waits in vcorr, and one committing while a claim charges the key is kept", async () => {
    await seedTenant(pg.db, "tn_krace", { maxInFlight: 100 });
    await seedPool(pg.db, "krace", 50);
    await seedDue(pg.db, "tn_krace", 5, { type: "krace", key: "a" });
    const input = { type: "krace", owner: "race-test", leaseMs: 60_000 };
    const [first] = await claim(pg.db, { ...input, budget: 1 });
    expect(await keyRow("tn_krace", "a")).toEqual({ vtime: 100, vcorr: 0, running: 1 });
    // The settle leaves the indexed vtime alone (a HOT update): 1,100 ms used, 100 charged.
    await settle(pg.db, [
      {
        id: first.id,
        leaseToken: first.leaseToken,
        attempt: first.attempt,
        status: "succeeded",
        startedAt: new Date(),
        durationMs: 1100,
        outcome: "success",
      },
    ]);
    expect(await keyRow("tn_krace", "a")).toEqual({ vtime: 100, vcorr: 1000, running: 0 });
    const [{ cost }] = await query<{ cost: number }>(
      pg.db,
      sql`SELECT cost_ms AS cost FROM tenant_pools WHERE tenant_id = 'tn_krace' AND type = 'krace'`,
    );

    // Another settle's correction holds the key's row while the next claim charges it.
    const got = await claimWhileHeld(
      (tx) => tx`UPDATE tenant_keys SET vcorr = vcorr + 500 WHERE tenant_id = 'tn_krace' AND key = 'a'`,
      { ...input, budget: 2 },
    );
    expect(got).toHaveLength(2);
    // Both corrections folded into vtime, then this claim's charge (2 runs at the tenant's estimate).
    expect(await keyRow("tn_krace", "a")).toEqual({ vtime: 100 + 1000 + 500 + 2 * cost, vcorr: 0, running: 2 });
  });
});
