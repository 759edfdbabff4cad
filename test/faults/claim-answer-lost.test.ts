// A claim commits and its answer is lost: the connection is cut at COMMIT (what a primary killed after
// its synchronous standby acknowledged does, or a network fault). Postgres has leased the triggers to
// the executor, which never received them. It must give them back as soon as Postgres answers again —
// not leave them for their lease (a minute here) to run out and re-run them as a failed attempt:
// every trigger delivered once, with one attempt, and no lease expired.
import { expect, it, vi } from "vitest";
import type { Executor } from "@fairway/executor";
import { connectPostgres, query, sql, type Store } from "@fairway/store";
import { PG_BASE_URL } from "../support/pg.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";
import { attemptAnomalies, deliveryReport, statusCounts, until } from "./support/ledger.ts";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.ts";

useDrill("test");
vi.setConfig({ testTimeout: 60_000 });

/** The executor's store, through a proxy that can lose an answer. */
async function throughProxy(): Promise<{ proxy: TcpProxy; store: Store; close(): Promise<void> }> {
  const u = new URL(PG_BASE_URL);
  const proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
  const store = connectPostgres(proxy.urlFor(db.url), { max: 4 });
  return {
    proxy,
    store,
    async close() {
      await store.close();
      await proxy.close();
    },
  };
}

/** Every trigger succeeded with one attempt, delivered once; no attempt says its lease expired. */
async function deliveredOnce(ids: string[], shape: string, executor: Executor): Promise<void> {
  await until(
    () => statusCounts(db.store.db),
    (c) => c.succeeded === ids.length,
    // Well under the lease: a claim left to its lease would hold its triggers for 60 s.
    30_000,
    "every trigger succeeded",
  );
  const report = deliveryReport(receiver.hits, ids);
  console.info(
    JSON.stringify({ drill: "claim-answer-lost", shape, ...report, released: executor.stats.inDoubtReleased }),
  );
  expect(report).toMatchObject({ lost: 0, duplicates: 0, foreign: 0 });
  const attempts = await query<{ outcome: string; n: number }>(
    db.store.db,
    sql`SELECT outcome, count(*)::int AS n FROM attempts GROUP BY outcome`,
  );
  expect(attempts).toEqual([{ outcome: "success", n: ids.length }]);
  expect(await attemptAnomalies(db.store.db)).toEqual([]);
}

it("a claim whose COMMIT's answer is lost: its triggers go back to the queue at once and run once", async () => {
  await seedTenant(db.store.db, "u", { maxInFlight: 1000 });
  await seedPool(db.store.db, "work", 50, { leaseMs: 60_000 });
  const { triggerIds } = await seedDue(db.store.db, "u", 40, { target: { url: `${receiver.url}/t/u` } });
  const via = await throughProxy();
  try {
    // The executor's first claim: its statements' text goes with it, and it leases all 40.
    const lost = via.proxy.loseAnswer((sent) => sent.includes("INSERT INTO leases"));
    const executor = startSurvivor({ db: via.store.db });
    await lost;
    await deliveredOnce(triggerIds, "claim", executor);
    expect(executor.stats.inDoubtReleased).toBe(40);
    await executor.stop();
  } finally {
    await via.close();
  }
});

it("a settle whose hand-off claims commit and whose answer is lost: the claimed triggers run once", async () => {
  // At its cap of 2, every settle of the tenant claims its next trigger in the same transaction (store
  // hand-off.ts). A rate quota keeps its triggers off standby (store standby.ts), where a finished run's
  // slot would go to one held already: so each settle's claim leases one, while any is left.
  await seedTenant(db.store.db, "c", { maxInFlight: 2, ratePerSecond: 1000, burst: 1000 });
  await seedPool(db.store.db, "work", 50, { leaseMs: 60_000 });
  const { triggerIds } = await seedDue(db.store.db, "c", 20, { target: { url: `${receiver.url}/t/c` } });
  const via = await throughProxy();
  try {
    // A settle (it records a success) and the claim written right behind it (its own transaction in
    // the same round trip: store hand-off.ts), which writes a lease.
    // Cut once the first claim written after the latest settle has passed its COMMIT (standby claims
    // may follow it in the same round trip).
    // The claim's own transaction: its first statement names its tenants (fairway.claim_tenants), its
    // second writes the lease, then its COMMIT (a standby claim, one statement, has no COMMIT of its own).
    const afterSettle = (sent: string, before: string) => {
      const all = before + sent;
      const settle = all.lastIndexOf("INSERT INTO success_detail");
      const claim = settle < 0 ? -1 : all.indexOf("fairway.claim_tenants", settle);
      const lease = claim < 0 ? -1 : all.indexOf("INSERT INTO leases", claim);
      return lease >= 0 && all.indexOf("commit", lease) >= before.length;
    };
    const executor = startSurvivor({ db: via.store.db });
    // A hand-off claim can find nothing left to take (the claim loop took it first): its lost answer
    // releases nothing, so the trap is set again, a bounded number of times, while triggers remain.
    const allDone = until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === triggerIds.length,
      30_000,
      "every trigger succeeded",
    ).then(() => "done" as const);
    allDone.catch(() => {});
    for (let armed = 0; armed < 5 && executor.stats.inDoubtReleased === 0; armed++) {
      if ((await Promise.race([via.proxy.loseAnswer(afterSettle), allDone])) === "done") break;
      // Released at the executor's next pass once the claim is noted in doubt.
      await until(
        () => executor.stats.inDoubtReleased,
        (n) => n > 0,
        2_000,
        "a release",
      ).catch(() => 0);
    }
    await deliveredOnce(triggerIds, "hand-off", executor);
    expect(executor.stats.inDoubtReleased).toBeGreaterThan(0);
    expect(Math.max(...receiver.maxOpen.values())).toBeLessThanOrEqual(2);
    await executor.stop();
  } finally {
    await via.close();
  }
});

it("stop() gives back a claim still in doubt: a rolling deploy leaves nothing to wait out a lease", async () => {
  await seedTenant(db.store.db, "g", { maxInFlight: 1000 });
  await seedPool(db.store.db, "work", 50, { leaseMs: 60_000 });
  const { triggerIds } = await seedDue(db.store.db, "g", 40, { target: { url: `${receiver.url}/t/g` } });
  const via = await throughProxy();
  try {
    const lost = via.proxy.loseAnswer((sent) => sent.includes("INSERT INTO leases"));
    // Its reaper would release the claim at its next pass: none comes before the stop.
    const executor = startSurvivor({ db: via.store.db, reapEveryMs: 600_000 });
    await lost;
    await until(
      () => statusCounts(db.store.db),
      (c) => c.running === triggerIds.length,
      10_000,
      "the lost claim committed",
    );
    await executor.stop(1000);
    expect(executor.stats.inDoubtReleased).toBe(triggerIds.length);
    expect(await statusCounts(db.store.db)).toEqual({ pending: triggerIds.length });
    // No attempt counted, no lease held (the spent lease row itself is dropped by a later reap).
    const [left] = await query<{ attempted: number }>(
      db.store.db,
      sql`SELECT count(*)::int AS attempted FROM triggers WHERE attempt_count > 0 OR lease_token IS NOT NULL`,
    );
    expect(left).toEqual({ attempted: 0 });
    expect(receiver.hits).toEqual([]);
  } finally {
    await via.close();
  }
});
