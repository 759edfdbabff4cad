// The claim's queue (schema.ts, triggerQueue; migration 0009) when a trigger's row is held by another
// writer at the moment a claim picks it: the claim skips the row and must leave its queue row in place,
// whatever the writer does with it. Here a transaction stands in for that writer (a PATCH of the
// retry limit: an update that moves nothing in the queue), holding rows while the claim runs.
import { describe, expect, it } from "vitest";
import postgres from "postgres";
import { LAYOUT_NAMES, claim, query, settle, sql } from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { seedDue, seedPool, seedTenant, succeeded } from "../../../test/support/seed.ts";

// Both layouts, on plain PostgreSQL (store.pg.test.ts).
describe.each(LAYOUT_NAMES)("%s layout", (layout) => {
  const pg = useTestDb({ layout });

  const drain = async (type: string) => {
    let n = 0;
    for (let got; (got = await claim(pg.db, { type, budget: 100, owner: "drain", leaseMs: 60_000 })).length; ) {
      n += got.length;
      await settle(
        pg.db,
        got.map((g) => succeeded(g)),
      );
    }
    return n;
  };

  it("a claim skips triggers another transaction holds, and they keep their place in the queue", async () => {
    await seedTenant(pg.db, "held", { maxInFlight: 100 });
    await seedPool(pg.db, "held", 50);
    const { triggerIds } = await seedDue(pg.db, "held", 10, { type: "held" });
    const heldIds = triggerIds.slice(0, 4);

    const other = postgres(pg.t.url, { max: 1, onnotice: () => {} });
    try {
      let release!: () => void;
      const releasing = new Promise<void>((r) => (release = r));
      let holding!: () => void;
      const held = new Promise<void>((r) => (holding = r));
      const writer = other.begin(async (tx) => {
        await tx`UPDATE triggers SET max_attempts = max_attempts + 1 WHERE id = ANY (${heldIds})`;
        holding();
        await releasing;
      });
      await held;
      const got = await claim(pg.db, { type: "held", budget: 100, owner: "a", leaseMs: 60_000 });
      expect(got.map((g) => g.id).sort()).toEqual(triggerIds.slice(4).sort());
      release();
      await writer;
    } finally {
      await other.end();
    }
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
    // The four held triggers are still queued, and the next claim takes them.
    expect(await drain("held")).toBe(4);
    const [{ n }] = await query<{ n: number }>(
      pg.db,
      sql`SELECT count(*)::int AS n FROM trigger_queue WHERE type = 'held'`,
    );
    expect(n).toBe(0);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });

  it("a queue row whose trigger is not pending is dropped by the claim that finds it, and claims nothing", async () => {
    await seedTenant(pg.db, "stray", { maxInFlight: 100 });
    await seedPool(pg.db, "stray", 50);
    const { triggerIds } = await seedDue(pg.db, "stray", 3, { type: "stray" });
    // Written past the sync trigger (as a restore or a replica could): the trigger is cancelled, its row stays.
    await pg.db.transaction(async (tx) => {
      await tx.execute(sql`SET LOCAL session_replication_role = replica`);
      await tx.execute(sql`UPDATE triggers SET status = 'cancelled' WHERE id = ${triggerIds[0]}`);
    });
    expect((await queueDrift(pg.db)).stray).toBe(1);
    expect(await drain("stray")).toBe(2);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });

  it("a running trigger cancelled by hand in psql stops counting against its tenant's cap", async () => {
    await seedTenant(pg.db, "hand", { maxInFlight: 2 });
    await seedPool(pg.db, "hand", 50);
    await seedDue(pg.db, "hand", 3, { type: "hand" });
    const got = await claim(pg.db, { type: "hand", budget: 10, owner: "a", leaseMs: 60_000 });
    expect(got).toHaveLength(2);
    await pg.db.execute(sql`UPDATE triggers SET status = 'cancelled', reason = 'by hand' WHERE id = ${got[0].id}`);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
    expect(await claim(pg.db, { type: "hand", budget: 10, owner: "a", leaseMs: 60_000 })).toHaveLength(1);
  });
});
