// What a claim counts as a tenant's due work (claim.ts): statement 1 takes a tenant as a candidate by
// the due time of its earliest queued trigger, and statement 2 sizes each tenant's room by the queue
// rows it could pick, found by the same index scan that picks them.
import { expect, it } from "vitest";
import { claim, query, settle, sql } from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { seedDue, seedPool, seedTenant, succeeded } from "../../../test/support/seed.ts";

const pg = useTestDb();

const claimOf = (type: string, budget: number) => claim(pg.db, { type, budget, owner: "t", leaseMs: 60_000 });

it("a tenant whose due triggers wait on a running one of their job takes no slots from other tenants", async () => {
  await seedPool(pg.db, "ovl", 50);
  // Weight 10: in the fair allocation its slots come ten times as often as the other tenant's.
  await seedTenant(pg.db, "a-blocked", { maxInFlight: 100, weight: 10 });
  const { jobId } = await seedDue(pg.db, "a-blocked", 5, { type: "ovl" });
  await pg.db.execute(sql`UPDATE triggers SET exclusive = true WHERE job_id = ${jobId}`);
  const [first] = await claimOf("ovl", 5);
  expect(first.tenantId).toBe("a-blocked"); // one of its job's triggers runs; the other four must wait

  await seedTenant(pg.db, "b-free", { maxInFlight: 100 });
  const { triggerIds } = await seedDue(pg.db, "b-free", 10, { type: "ovl" });
  const got = await claimOf("ovl", 4);
  // All four slots go to the tenant that can use them. Counting the blocked tenant's four queue rows as
  // due gave it most of the claim, which then came back with one row.
  expect(got.map((g) => g.tenantId)).toEqual(["b-free", "b-free", "b-free", "b-free"]);
  expect(triggerIds).toEqual(expect.arrayContaining(got.map((g) => g.id)));
  const [{ waiting }] = await query<{ waiting: number }>(
    pg.db,
    sql`SELECT count(*)::int AS waiting FROM trigger_queue WHERE job_id = ${jobId}`,
  );
  expect(waiting).toBe(4);
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
});

it("a tenant is a candidate by its earliest queued trigger, whatever the priority of later ones", async () => {
  await seedPool(pg.db, "due", 50);
  await seedTenant(pg.db, "later", { maxInFlight: 100 });
  await seedTenant(pg.db, "mixed", { maxInFlight: 100 });
  await seedTenant(pg.db, "now", { maxInFlight: 100 });
  const hourAhead = new Date(Date.now() + 3_600_000);
  await seedDue(pg.db, "later", 3, { type: "due", at: hourAhead, priority: 5 });
  // A high-priority trigger an hour ahead comes first in claim order, but not in due order.
  await seedDue(pg.db, "mixed", 2, { type: "due", at: hourAhead, priority: 9 });
  const mixedDue = await seedDue(pg.db, "mixed", 2, { type: "due" });
  const nowDue = await seedDue(pg.db, "now", 3, { type: "due" });

  const got = await claimOf("due", 50);
  expect(got.map((g) => g.id).sort()).toEqual([...mixedDue.triggerIds, ...nowDue.triggerIds].sort());
  expect(await claimOf("due", 50)).toEqual([]);
  const [{ queued }] = await query<{ queued: number }>(
    pg.db,
    sql`SELECT count(*)::int AS queued FROM trigger_queue WHERE type = 'due'`,
  );
  expect(queued).toBe(5);
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
});

it("racing claims never start two triggers of one exclusive job, and every trigger runs once", async () => {
  await seedPool(pg.db, "race", 50);
  const all = new Map<string, string>(); // trigger → job
  for (const tenant of ["r1", "r2"]) {
    await seedTenant(pg.db, tenant, { maxInFlight: 100 });
    for (let j = 0; j < 10; j++) {
      const { jobId, triggerIds } = await seedDue(pg.db, tenant, 4, { type: "race" });
      await pg.db.execute(sql`UPDATE triggers SET exclusive = true WHERE job_id = ${jobId}`);
      for (const id of triggerIds) all.set(id, jobId);
    }
  }
  // A job is marked running from its claim until just before its settle is sent: while it is marked,
  // the database also has it running, so a claim that returns another trigger of it started two.
  const running = new Set<string>();
  const ran: string[] = [];
  const overlaps: string[] = [];
  const claimer = async (owner: string) => {
    for (let idle = 0; idle < 20; ) {
      const got = await claim(pg.db, { type: "race", budget: 3, owner, leaseMs: 60_000 });
      if (got.length === 0) {
        idle++;
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      idle = 0;
      for (const g of got) {
        if (running.has(g.jobId)) overlaps.push(g.id);
        running.add(g.jobId);
        ran.push(g.id);
      }
      await new Promise((r) => setTimeout(r, 2));
      for (const g of got) running.delete(g.jobId);
      await settle(
        pg.db,
        got.map((g) => succeeded(g)),
      );
    }
  };
  await Promise.all(["c1", "c2", "c3", "c4"].map(claimer));
  expect(overlaps).toEqual([]);
  expect(ran.sort()).toEqual([...all.keys()].sort());
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
});
