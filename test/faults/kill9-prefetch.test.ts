// A pool claims ahead of its free slots: at least QUEUE_MS of its runs wait in its queue under leases,
// up to maxLeasesHeld() (pool.ts). `kill -9` an executor whose queue is deep: with 30 ms deliveries it
// queues several times what half a pool would; with fast ones, as many as the cap allows. Its queued
// triggers never started: each must run exactly once, after its lease expires. Only the runs in flight
// at the kill are delivered twice, under their own webhook-ids.
import { expect, it } from "vitest";
import { maxLeasesHeld } from "../../packages/executor/src/pool.ts";
import { query, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "./support/children.ts";
import { attemptAnomalies, deliveryReport, leasesHeld, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";

const TOTAL = 600;

useDrill("test");

it.each([
  // Once the victim has measured them, it queues ~33 (QUEUE_MS of runs), where sizing by claim time
  // alone queued half a pool (5).
  { POOL: 10, delayMs: 30, queue: "QUEUE_MS of 30 ms deliveries" },
  // QUEUE_MS would ask for ~100 ahead of 2 slots: the 32-pool cap (64) bounds it.
  { POOL: 2, delayMs: 1, queue: "fast deliveries, up to the cap" },
])(
  "kill -9 with a deep prefetch queue ($queue): queued triggers run once after expiry, only in-flight ones twice, lost 0",
  async ({ POOL, delayMs }) => {
    await seedTenant(db.store.db, "q", { maxInFlight: 1000 });
    await seedPool(db.store.db, "work", POOL, { leaseMs: 2000, timeoutMs: 10_000 });
    const { triggerIds } = await seedDue(db.store.db, "q", TOTAL, {
      target: { url: `${receiver.url}/t/q` },
      maxAttempts: 5,
    });

    receiver.delayMs = delayMs;
    const victim = await startExecutorChild({ DATABASE_URL: db.url, OWNER: "victim" });
    await receiver.waitFor(
      (hits) => hits.filter((h) => h.status === 200).length >= 150,
      30_000,
      "150 deliveries answered",
    );
    // From now on every delivery stays open: the pool's slots fill with held runs, its queue stays.
    receiver.mode = { kind: "hold" };
    await receiver.waitFor(() => receiver.held === POOL, 20_000, "a full pool held");
    const held = new Set(receiver.hits.filter((h) => h.status === null).map((h) => h.id));
    const answered = new Set(receiver.hits.filter((h) => h.status === 200).map((h) => h.id));
    expect(held.size).toBe(POOL);
    // Every answered delivery's result is written before the kill (waited for, not timed: the settle
    // linger plus a write, however slow the machine).
    await until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === answered.size,
      20_000,
      "every answered delivery settled",
    );

    victim.signal("SIGKILL");
    expect(await victim.exited).toBe(null);
    const leased = await leasesHeld(db.store.db, "victim");
    // The queue was deeper than half a pool, and within the bound on leases one executor holds.
    expect(leased).toBeGreaterThan(POOL + POOL / 2);
    expect(leased).toBeLessThanOrEqual(maxLeasesHeld(POOL));

    receiver.mode = { kind: "ok" };
    receiver.delayMs = 0;
    const survivor = startSurvivor();
    try {
      await until(
        () => statusCounts(db.store.db),
        (c) => c.succeeded === TOTAL,
        30_000,
        "all triggers succeeded",
      );
      const report = deliveryReport(receiver.hits, triggerIds);
      console.log(
        JSON.stringify({
          drill: "kill9-prefetch",
          pool: POOL,
          delayMs,
          ...report,
          leased,
          inFlightAtKill: held.size,
          reaped: survivor.stats.reaped,
        }),
      );
      expect(report.lost).toBe(0);
      expect(report.foreign).toBe(0);
      // Exactly the held runs were delivered twice; the queued ones, claimed but never started, once.
      expect(report.duplicates).toBe(POOL);
      const twice = receiver.hits
        .filter((h, i) => receiver.hits.findIndex((x) => x.id === h.id) !== i)
        .map((h) => h.id);
      expect(new Set(twice)).toEqual(held);
      expect(survivor.stats.reaped).toBe(leased);
      // The reaper cannot tell a queued trigger from a running one: both record the lost lease, then the
      // re-run succeeds. Every other trigger succeeded at its first attempt.
      const outcomes = await query<{ outcomes: string[]; n: number }>(
        db.store.db,
        sql`SELECT outcomes, count(*)::int AS n
            FROM (SELECT array_agg(outcome ORDER BY attempt) AS outcomes FROM attempts GROUP BY trigger_id) a
           GROUP BY outcomes ORDER BY n`,
      );
      expect(outcomes).toEqual([
        { outcomes: ["lease_expired", "success"], n: leased },
        { outcomes: ["success"], n: TOTAL - leased },
      ]);
      expect(await attemptAnomalies(db.store.db)).toEqual([]);
    } finally {
      await survivor.stop(2000);
    }
  },
);
