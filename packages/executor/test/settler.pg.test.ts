// Settle batching (settler.ts): a full batch is written at once; what arrives during a write and is
// short of a batch waits for its linger rather than being written straight after (bigger batches); and
// flush() — what stop() relies on — writes everything. Against real Postgres: the rows must really move.
import { expect, it } from "vitest";
import type { DeliveryResult } from "@fairway/core";
import { claim, query, sql } from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { seedDue, seedPool, seedTenant } from "../../../test/support/seed.ts";
import { Settler, decideSettlement } from "../src/settler.ts";

const pg = useTestDb();

const running = async () =>
  (await query<{ n: number }>(pg.db, sql`SELECT count(*)::int AS n FROM triggers WHERE status = 'running'`))[0].n;

it("writes a full batch at once, holds a short remainder for its linger, and flush() writes the rest", async () => {
  await seedTenant(pg.db, "s1", { maxInFlight: 100 });
  await seedPool(pg.db, "work", 10);
  await seedDue(pg.db, "s1", 5);
  const claimed = await claim(pg.db, { type: "work", budget: 5, owner: "exe_s", leaseMs: 60_000 });
  expect(claimed).toHaveLength(5);

  let settled = 0;
  const errors: unknown[] = [];
  // A linger no test run reaches: anything written before flush() was written because a batch was full.
  const settler = new Settler({
    db: pg.db,
    batchSize: 2,
    lingerMs: 600_000,
    now: Date.now,
    onSettled: (rows) => void (settled += rows.length),
    onError: (err) => errors.push(err),
  });
  const ok: DeliveryResult = {
    outcome: "success",
    httpStatus: 200,
    durationMs: 1,
    error: null,
    responseBody: null,
    retryAfterMs: null,
  };
  for (const c of claimed) settler.add(decideSettlement(c, ok, new Date(), Date.now()), Date.now() + 60_000);

  // Two full batches went out as they filled; the fifth settlement waits for its linger.
  await expect.poll(() => settled, { timeout: 10_000 }).toBe(4);
  expect(settler.size).toBe(1);
  expect(await running()).toBe(1);

  await settler.flush();
  expect(settled).toBe(5);
  expect(settler.size).toBe(0);
  expect(await running()).toBe(0);
  expect(errors).toEqual([]);
  const attempts = await query<{ n: number }>(pg.db, sql`SELECT count(*)::int AS n FROM attempts`);
  expect(attempts[0].n).toBe(5);
});

it("a result whose tenant is at its cap brings the write forward, and the others go with it", async () => {
  await seedTenant(pg.db, "s2", { maxInFlight: 2 });
  await seedTenant(pg.db, "s3", { maxInFlight: 100 });
  await seedPool(pg.db, "work2", 10);
  await seedDue(pg.db, "s2", 2, { type: "work2" });
  await seedDue(pg.db, "s3", 2, { type: "work2" });
  const claimed = await claim(pg.db, { type: "work2", budget: 10, owner: "exe_s", leaseMs: 60_000 });
  const capped = claimed.filter((c) => c.atCap);
  const free = claimed.filter((c) => !c.atCap);
  expect(capped.map((c) => c.tenantId)).toEqual(["s2", "s2"]);
  expect(free.map((c) => c.tenantId)).toEqual(["s3", "s3"]);

  let settled = 0;
  // The plain linger is one no test run reaches: whatever is written went with an at-cap result.
  const settler = new Settler({
    db: pg.db,
    lingerMs: 600_000,
    atCapLingerMs: 20,
    now: Date.now,
    onSettled: (rows) => void (settled += rows.length),
  });
  const ok: DeliveryResult = {
    outcome: "success",
    httpStatus: 200,
    durationMs: 1,
    error: null,
    responseBody: null,
    retryAfterMs: null,
  };
  const add = (c: (typeof claimed)[number]) =>
    settler.add(decideSettlement(c, ok, new Date(), Date.now()), Date.now() + 60_000, c.atCap);
  free.forEach(add);
  // Not written after many at-cap lingers: these two wait for the plain one.
  await new Promise((r) => setTimeout(r, 300));
  expect(settled).toBe(0);
  expect(settler.size).toBe(2);
  add(capped[0]);
  await expect.poll(() => settled, { timeout: 10_000 }).toBe(3);
  expect(settler.size).toBe(0);
  await settler.flush();
  add(capped[1]);
  await expect.poll(() => settled, { timeout: 10_000 }).toBe(4);
  expect(await running()).toBe(0);
});
