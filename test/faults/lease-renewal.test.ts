// A run longer than its pool's lease (a job's own timeoutMs may exceed it) must keep its lease by
// renewal while its executor is alive: no reap, no second delivery. Renewal must follow the lease: a
// fixed renewal period longer than a short lease lets it expire under a live, healthy run.
import { expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";

useDrill();

it("renews a 1 s lease under a 2.5 s run: delivered once, one attempt", async () => {
  await seedTenant(db.store.db, "a");
  await seedPool(db.store.db, "work", 5, { leaseMs: 1000, timeoutMs: 900 });
  const { jobId, triggerIds } = await seedDue(db.store.db, "a", 3, { target: { url: `${receiver.url}/t/a` } });
  await db.store.db.execute(sql`UPDATE jobs SET timeout_ms = 5000 WHERE id = ${jobId}`);
  receiver.delayMs = 2500;

  const ex = startSurvivor({ reapEveryMs: 100 });
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === 3,
      20_000,
      "runs finished",
    );
    expect(receiver.hits.map((h) => h.id).sort()).toEqual([...triggerIds].sort());
    expect(ex.stats.reaped).toBe(0);
    const rows = await query<{ outcome: string }>(db.store.db, sql`SELECT outcome FROM attempts`);
    expect(rows.map((r) => r.outcome)).toEqual(["success", "success", "success"]);
  } finally {
    await ex.stop(1000);
  }
});
