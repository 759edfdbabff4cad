// A settle that frees an at-cap tenant's slot claims its next trigger in the same transaction (store
// hand-off.ts). Two executors race those hand-offs for one capped tenant, and one of them is killed
// with -9 in the middle: nothing is lost, only runs the victim had started are delivered twice, the
// receiver never sees the tenant over its cap, and no queue row or running count is left behind.
import { expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "./support/children.ts";
import { attemptAnomalies, deliveryReport, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, useDrill } from "./support/drill.ts";

const TOTAL = 300;
const CAP = 4;

useDrill();

it("kill -9 during at-cap hand-offs: lost 0, only started runs twice, never over the cap", {
  timeout: 90_000,
}, async () => {
  await seedTenant(db.store.db, "h", { maxInFlight: CAP });
  await seedPool(db.store.db, "work", 10, { leaseMs: 1500, timeoutMs: 10_000 });
  const { triggerIds } = await seedDue(db.store.db, "h", TOTAL, {
    target: { url: `${receiver.url}/t/h` },
    maxAttempts: 5,
  });
  receiver.delayMs = 40;
  const env = { DATABASE_URL: db.url, REAP_MS: "200" };
  const victim = await startExecutorChild({ ...env, OWNER: "victim" });
  const survivor = await startExecutorChild({ ...env, OWNER: "survivor" });
  await receiver.waitFor((hits) => hits.length >= TOTAL / 3, 60_000, "a third delivered");
  victim.signal("SIGKILL");
  expect(await victim.exited).toBe(null);
  const hitsAtKill = receiver.hits.length;
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === TOTAL,
      60_000,
      "all triggers succeeded",
    );
    const report = deliveryReport(receiver.hits, triggerIds);
    console.log(JSON.stringify({ drill: "kill9-handoff", ...report, hitsAtKill, maxOpen: receiver.maxOpen.get("h") }));
    expect(report.lost).toBe(0);
    expect(report.foreign).toBe(0);
    // Only runs the victim had started could be delivered twice: those in flight (at most the cap) and
    // those answered whose settle had not committed. A standby trigger starts in the slot a finished run
    // frees, before that run's settle (store standby.ts), so there are at most the cap of those too.
    expect(report.duplicates).toBeLessThanOrEqual(2 * CAP);
    expect(receiver.maxOpen.get("h")).toBeLessThanOrEqual(CAP);
    expect(await attemptAnomalies(db.store.db)).toEqual([]);
    expect(await queueDrift(db.store.db)).toEqual(NO_DRIFT);
    const [{ running }] = await query<{ running: number }>(
      db.store.db,
      sql`SELECT coalesce(sum(running), 0)::int AS running FROM tenant_pools`,
    );
    expect(running).toBe(0);
  } finally {
    await survivor.stop();
  }
});
