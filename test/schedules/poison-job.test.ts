// One cron job whose schedule cannot be computed (its zone is unknown — e.g. renamed in a tz-database
// upgrade after it was created) must not stall the materializer for everyone: it is paused and
// reported, and every other job still fires.
import { afterAll, beforeAll, expect, it } from "vitest";
import { materialize, query, sql } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { seedTenant } from "../support/seed.ts";

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(async () => t?.drop());

it("pauses a job with an unknown time zone and materializes the others", async () => {
  const db = t.store.db;
  await seedTenant(db, "p");
  const due = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000).toISOString();
  for (const [id, tz] of [
    ["good", "Europe/Berlin"],
    ["poison", "Mars/Olympus_Mons"],
  ]) {
    await db.execute(sql`
      INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at)
      VALUES (${id}, 'p', ${id}, 'work', '* * * * * *', ${tz}, 3, 1000, 60000, ${due}::timestamptz)`);
  }
  const m = await materialize(db, new Date(), 1000);
  expect(m.failed).toEqual([{ jobId: "poison", tenantId: "p", error: expect.stringMatching(/timezone/i) }]);
  expect(m.fired).toBeGreaterThan(0);
  const jobs = await query<{ id: string; status: string; n: number }>(
    db,
    sql`SELECT j.id, j.status, (SELECT count(*)::int FROM triggers x WHERE x.job_id = j.id) AS n FROM jobs j ORDER BY j.id`,
  );
  expect(jobs).toEqual([
    { id: "good", status: "active", n: m.fired },
    { id: "poison", status: "paused", n: 0 },
  ]);
  // The next pass does not trip over it again.
  expect((await materialize(db, new Date(Date.now() + 2000), 1000)).failed).toEqual([]);
});
