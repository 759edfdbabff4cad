// A target that accepts a delivery and never answers, and a handler that never returns: each attempt
// ends at its pool's timeout, is settled once as a timeout (retried, then dead), and the request is
// given up (its connection closed) rather than left open. A timeout is not a stop: the attempt counts.
import { expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { attemptAnomalies, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";

useDrill();

const outcomes = () =>
  query<{ outcome: string; error: string; n: number }>(
    db.store.db,
    sql`SELECT outcome, error, count(*)::int AS n FROM attempts GROUP BY outcome, error ORDER BY outcome`,
  );

it("a hung webhook target times out: every attempt settled once as a timeout, the request given up", async () => {
  await seedTenant(db.store.db, "a", { maxInFlight: 50 });
  await seedPool(db.store.db, "work", 10, { leaseMs: 10_000, timeoutMs: 300 });
  const { triggerIds } = await seedDue(db.store.db, "a", 20, {
    target: { url: `${receiver.url}/t/a` },
    maxAttempts: 2,
    initialDelayMs: 10,
  });
  receiver.mode = { kind: "hold" };
  const ex = startSurvivor({ settleLingerMs: 0 });
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => c.dead === 20,
      20_000,
      "every trigger dead after two timeouts",
    );
    // The executor closed each request it gave up on: nothing is left open at the receiver.
    await until(
      () => receiver.open,
      (n) => n === 0,
      5_000,
      "timed-out requests closed",
    );
    receiver.release();
    expect(receiver.hits.filter((h) => h.status !== null)).toEqual([]);
    expect(await outcomes()).toEqual([{ outcome: "timeout", error: "timed out", n: 40 }]);
    expect(await attemptAnomalies(db.store.db)).toEqual([]);
    // Each trigger delivered exactly twice, as attempts 1 and 2.
    const perId = new Map<string, number[]>();
    for (const h of receiver.hits) perId.set(h.id, [...(perId.get(h.id) ?? []), h.attempt].sort());
    expect([...perId.keys()].sort()).toEqual([...triggerIds].sort());
    for (const attempts of perId.values()) expect(attempts).toEqual([1, 2]);
    expect(ex.stats).toMatchObject({ claimed: 40, settled: 40, released: 0 });
  } finally {
    await ex.stop(1000);
    await db.store.db.execute(sql`DELETE FROM attempt_log`);
    await db.store.db.execute(sql`DELETE FROM triggers`);
  }
});

it("a handler past its timeout sees its signal aborted, whether it listened from the start or looks late", async () => {
  await seedPool(db.store.db, "local", 10, { leaseMs: 10_000, timeoutMs: 200 });
  await seedDue(db.store.db, "a", 5, { type: "local", maxAttempts: 1 });
  let calls = 0;
  let listened = 0;
  let lookedLate = 0;
  const ex = startSurvivor({
    handlers: {
      local: async ({ signal }) => {
        // Every other run listens at once; the rest only look after their timeout has passed.
        if (calls++ % 2 === 0) {
          listened++;
          await new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
        }
        lookedLate++;
        await new Promise((r) => setTimeout(r, 600));
        if (signal.aborted) throw new Error("aborted");
      },
    },
    settleLingerMs: 0,
  });
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => c.dead === 5,
      20_000,
      "every local trigger dead after its timeout",
    );
    expect([listened, lookedLate]).toEqual([3, 2]);
    expect(await outcomes()).toEqual([{ outcome: "timeout", error: "timed out", n: 5 }]);
  } finally {
    await ex.stop(1000);
  }
});
