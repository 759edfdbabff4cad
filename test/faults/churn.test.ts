// Worker churn. Three executor processes are restarted over and over — alternately
// kill -9 (crash) and SIGTERM (deploy) — while a few thousand triggers run. Lost = 0; duplicates only
// come from crashed executors' in-flight work (bounded by pool size × crashes); the rate is reported.
import { expect, it } from "vitest";
import { maxLeasesHeld } from "../../packages/executor/src/pool.ts";
import { query, sql } from "@fairway/store";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { until } from "../support/until.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "./support/children.ts";
import { attemptAnomalies, deliveryReport, statusCounts } from "./support/ledger.ts";
import { db, receiver, useDrill } from "./support/drill.ts";

const TOTAL = 2000;
const POOL = 20;
/** Restarts per executor slot. */
const ROUNDS = 3;
useDrill();

it("three executors restarted repeatedly under load: lost 0, duplicates bounded", { timeout: 200_000 }, async () => {
  const ids: string[] = [];
  for (const t of ["a", "b", "c", "d"]) {
    await seedTenant(db.store.db, t, { maxInFlight: 20 });
    ids.push(
      ...(await seedDue(db.store.db, t, TOTAL / 4, { target: { url: `${receiver.url}/t/${t}` }, maxAttempts: 10 }))
        .triggerIds,
    );
  }
  await seedPool(db.store.db, "work", POOL, { leaseMs: 1500, timeoutMs: 1000 });
  // Slow enough that every restart finds runs in flight.
  receiver.delayMs = 200;

  let n = 0;
  const start = () =>
    startExecutorChild({ DATABASE_URL: db.url, OWNER: `churn-${++n}`, REAP_MS: "200", GRACE_MS: "500" });
  let crashes = 0;
  let deploys = 0;
  let done = false;
  let finish = () => {};
  const finished = new Promise<void>((r) => (finish = r));
  // Each of the three slots churns on its own: run until the drill's progress reaches its next mark,
  // then crash or deploy, then replace. Marks by answered deliveries, not by time: ROUNDS restarts per
  // slot, spread over the run, however slow the machine (on a timer, a loaded full-suite run once saw
  // only 5 churn events). Slots churn independently, so one may be down while another restarts.
  const answered = () => receiver.hits.filter((h) => h.status === 200).length;
  const slot = async (k: number) => {
    let child = await start();
    for (let round = 0; round < ROUNDS && !done; round++) {
      const mark = ((3 * round + k + 1) / (3 * ROUNDS + 1)) * TOTAL;
      await until(answered, (a) => done || a >= mark, 170_000, `slot ${k} round ${round}: ${mark} answered`);
      if (done) break;
      if ((round + k) % 2 === 0) {
        child.signal("SIGKILL");
        await child.exited;
        crashes++;
      } else {
        await child.stop();
        deploys++;
      }
      child = await start();
    }
    // The slot's last executor serves until the drill is done: stopped earlier, the three slots' last
    // rounds would leave no executor for the rest of the work.
    await finished;
    await child.stop();
  };
  const slots = [0, 1, 2].map(slot);
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => (c.succeeded ?? 0) + (c.dead ?? 0) === TOTAL,
      // A bound for a loaded 2-core machine: a quiet one settles everything in well under a minute.
      150_000,
      "every trigger settled",
    );
  } finally {
    done = true;
    finish();
    await Promise.all(slots);
  }

  const report = deliveryReport(receiver.hits, ids);
  const counts = await statusCounts(db.store.db);
  console.log(
    JSON.stringify({
      drill: "churn",
      ...report,
      counts,
      crashes,
      deploys,
      duplicateRate: +(report.duplicates / TOTAL).toFixed(4),
      maxOpen: Object.fromEntries(receiver.maxOpen),
    }),
  );
  expect(counts).toEqual({ succeeded: TOTAL });
  expect(report.lost).toBe(0);
  expect(report.foreign).toBe(0);
  expect(crashes + deploys).toBe(3 * ROUNDS);
  expect(report.duplicates).toBeLessThanOrEqual(maxLeasesHeld(POOL) * (crashes + deploys));
  for (const t of ["a", "b", "c", "d"]) expect(receiver.maxOpen.get(t)).toBeLessThanOrEqual(20);
  expect(await attemptAnomalies(db.store.db)).toEqual([]);
  // After every crash and deploy, nothing is left queued or counted as running (test/support/queue.ts).
  expect(await queueDrift(db.store.db)).toEqual(NO_DRIFT);
  const [{ queued, running }] = await query<{ queued: number; running: number }>(
    db.store.db,
    sql`
    SELECT (SELECT count(*)::int FROM trigger_queue) AS queued, (SELECT coalesce(sum(running), 0)::int FROM tenant_pools) AS running`,
  );
  expect({ queued, running }).toEqual({ queued: 0, running: 0 });
});
