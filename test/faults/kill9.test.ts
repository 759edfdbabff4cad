// `kill -9` an executor process holding ~100 leases. Its triggers must complete after
// the leases expire (another executor reaps and re-runs them): lost = 0, and duplicate deliveries are
// at most the number that was in flight, each with the same webhook-id as the first delivery.
import { expect, it } from "vitest";
import { maxLeasesHeld } from "../../packages/executor/src/pool.ts";
import { query, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "./support/children.ts";
import { attemptAnomalies, deliveryReport, leasesHeld, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";

const TOTAL = 300;
const IN_FLIGHT = 100;
const LEASE_MS = 2000;

useDrill();

it("kill -9 with 100 leases held: all complete after expiry, lost 0, duplicates ≤ in flight", async () => {
  await seedTenant(db.store.db, "a", { maxInFlight: 1000 });
  await seedPool(db.store.db, "work", IN_FLIGHT, { leaseMs: LEASE_MS, timeoutMs: 1500 });
  const { triggerIds } = await seedDue(db.store.db, "a", TOTAL, {
    target: { url: `${receiver.url}/t/a` },
    maxAttempts: 5,
  });

  // The victim claims a full pool plus the half pool it queues ahead before any run has finished (150
  // leases); the receiver holds the 100 running deliveries open, so 100 are in flight and 50 claimed
  // but never started.
  receiver.mode = { kind: "hold" };
  const victim = await startExecutorChild({ DATABASE_URL: db.url, OWNER: "victim" });
  await receiver.waitFor(() => receiver.held === IN_FLIGHT, 20_000, "victim holding a full pool");
  const held = new Set(receiver.hits.map((h) => h.id));
  victim.signal("SIGKILL");
  const killedAt = Date.now();
  expect(await victim.exited).toBe(null);
  const leased = await leasesHeld(db.store.db, "victim");
  expect(leased).toBe(IN_FLIGHT + IN_FLIGHT / 2);
  expect(leased).toBeLessThanOrEqual(maxLeasesHeld(IN_FLIGHT));

  receiver.mode = { kind: "ok" };
  const survivor = startSurvivor();
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === TOTAL,
      30_000,
      "all triggers succeeded",
    );
    const recoveredMs = Date.now() - killedAt;

    const report = deliveryReport(receiver.hits, triggerIds);
    const dupIds = new Set(
      receiver.hits.filter((h, i) => receiver.hits.findIndex((x) => x.id === h.id) !== i).map((h) => h.id),
    );
    console.log(
      JSON.stringify({
        drill: "kill9",
        ...report,
        inFlightAtKill: held.size,
        recoveredMs,
        reaped: survivor.stats.reaped,
      }),
    );
    expect(report.lost).toBe(0);
    expect(report.foreign).toBe(0);
    expect(report.duplicates).toBeLessThanOrEqual(IN_FLIGHT);
    // Every duplicate is a re-delivery of a trigger that was in flight at the kill, under its own id.
    for (const id of dupIds) expect(held.has(id)).toBe(true);
    expect(survivor.stats.reaped).toBe(leased);

    // The killed attempt is on record as lease_expired; the re-run is attempt 2.
    const outcomes = await query<{ outcomes: string[]; n: number }>(
      db.store.db,
      sql`SELECT array_agg(outcome ORDER BY attempt) AS outcomes, count(DISTINCT trigger_id)::int AS n
            FROM attempts WHERE trigger_id IN (SELECT jsonb_array_elements_text(${JSON.stringify([...held])}::jsonb))
           GROUP BY trigger_id HAVING true LIMIT 1`,
    );
    expect(outcomes[0].outcomes).toEqual(["lease_expired", "success"]);
    expect(await attemptAnomalies(db.store.db)).toEqual([]);
  } finally {
    await survivor.stop(2000);
  }
});
