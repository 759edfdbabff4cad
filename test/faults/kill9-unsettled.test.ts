// A run that has finished is settled only when its result is written, and results wait up to the
// settle linger to share a statement (settler.ts). `kill -9` an executor while every result it has is
// waiting: those runs were delivered, but nothing of them reached Postgres. Each must be re-run once
// its lease expires — a duplicate with its original webhook-id, never a loss — and its record must say
// so: attempt 1 lease_expired, attempt 2 success.
import { expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "./support/children.ts";
import { attemptAnomalies, deliveryReport, leasesHeld, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";

const TOTAL = 60;

useDrill();

it("kill -9 with delivered runs not yet settled: each re-run once after expiry, lost 0, attempts lease_expired then success", async () => {
  await seedTenant(db.store.db, "u", { maxInFlight: 1000 });
  await seedPool(db.store.db, "work", 100, { leaseMs: 2000, timeoutMs: 1500 });
  const { triggerIds } = await seedDue(db.store.db, "u", TOTAL, {
    target: { url: `${receiver.url}/t/u` },
    maxAttempts: 5,
  });

  // A linger no run reaches, and fewer results than a settle batch: nothing is written before the kill.
  const victim = await startExecutorChild({ DATABASE_URL: db.url, OWNER: "victim", SETTLE_LINGER_MS: "600000" });
  await receiver.waitFor(
    (hits) => hits.filter((h) => h.status === 200).length === TOTAL,
    20_000,
    "every trigger delivered and answered",
  );
  victim.signal("SIGKILL");
  expect(await victim.exited).toBe(null);
  const unsettled = await leasesHeld(db.store.db, "victim");
  expect(unsettled).toBe(TOTAL);

  const survivor = startSurvivor();
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === TOTAL,
      30_000,
      "all triggers succeeded",
    );
    const report = deliveryReport(receiver.hits, triggerIds);
    expect(report.lost).toBe(0);
    expect(report.foreign).toBe(0);
    // Each delivered once by the victim and once more by the survivor: the result that died is not
    // taken for a success.
    expect(report.deliveries).toBe(2 * TOTAL);
    expect(report.duplicates).toBe(TOTAL);
    expect(survivor.stats.reaped).toBe(TOTAL);
    const outcomes = await query<{ outcomes: string[]; n: number }>(
      db.store.db,
      sql`SELECT outcomes, count(*)::int AS n
            FROM (SELECT array_agg(outcome ORDER BY attempt) AS outcomes FROM attempts GROUP BY trigger_id) a
           GROUP BY outcomes`,
    );
    expect(outcomes).toEqual([{ outcomes: ["lease_expired", "success"], n: TOTAL }]);
    expect(await attemptAnomalies(db.store.db)).toEqual([]);
  } finally {
    await survivor.stop(2000);
  }
});
