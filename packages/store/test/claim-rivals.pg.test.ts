// Claims race per tenant: statement 1 locks candidate tenants with SKIP LOCKED, so a claim that runs
// while another holds some of them locks only the rest (claim.ts). It must give those only the slots
// they win against the held ones too, not the whole budget; and report the held ones as busy.
import { expect, it } from "vitest";
import { claimReport, query, sql } from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { seedDue, seedPool, seedTenant } from "../../../test/support/seed.ts";

const pg = useTestDb();

it("a claim racing another over a heavier tenant takes only the light tenant's share", async () => {
  await seedPool(pg.db, "race", 50);
  await seedTenant(pg.db, "light", { maxInFlight: 100, weight: 1 });
  await seedTenant(pg.db, "heavy", { maxInFlight: 100, weight: 5 });
  await seedDue(pg.db, "light", 30, { type: "race" });
  await seedDue(pg.db, "heavy", 30, { type: "race" });
  const input = { type: "race", budget: 12, owner: "t", leaseMs: 60_000 };

  // Another claim holds "heavy" (its statement 1 lock) while this one runs.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const other = pg.db.transaction(async (tx) => {
    await tx.execute(sql`SELECT id FROM tenants WHERE id = 'heavy' FOR NO KEY UPDATE`);
    locked();
    await held;
  });
  await isLocked;
  const raced = await claimReport(pg.db, input);
  release();
  await other;

  // Slots 1:5 over 12: "light" wins 2 of them (its slots at 0 and 100 against heavy's 0, 20, …, 200).
  // Without the held tenant in the allocation it took all 12.
  expect(raced.busy).toEqual(["heavy"]);
  expect(raced.claimed.map((c) => c.tenantId)).toEqual(["light", "light"]);

  // Nothing held: the next claim serves both, by weight.
  const next = await claimReport(pg.db, input);
  expect(next.busy).toEqual([]);
  const count = (t: string) => next.claimed.filter((c) => c.tenantId === t).length;
  expect(count("heavy")).toBeGreaterThan(count("light"));
  expect(next.claimed.length).toBe(12);

  const [{ running }] = await query<{ running: number }>(
    pg.db,
    sql`SELECT sum(running)::int AS running FROM tenant_pools`,
  );
  expect(running).toBe(14);
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
});
