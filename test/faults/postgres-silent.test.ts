// Connections to Postgres that go silent — no answer, no error, no close — as a half-open TCP
// connection or a socket lost mid-write leaves them. Every statement the executor had in flight on them
// would wait for good, and with it the loop that awaited it: the executor would stop delivering while
// nothing failed. The store fails a statement past its deadline and replaces its pool
// (packages/store/src/guarded-client.ts), so the loops go on, on new connections, within the deadline.
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectPostgres, type Store } from "@fairway/store";
import { PG_BASE_URL } from "../support/pg.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { deliveryReport, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.ts";

const DEADLINE_MS = 1500;
const PER_TENANT = 150;
let proxy: TcpProxy;
let store: Store;

useDrill();
beforeAll(async () => {
  const u = new URL(PG_BASE_URL);
  proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
  store = connectPostgres(proxy.urlFor(db.url), { max: 4, deadlineMs: DEADLINE_MS });
});
afterAll(async () => {
  await store?.close();
  await proxy?.close();
});

it("every connection goes silent under load: statements fail at their deadline, the pool is replaced, deliveries resume", async () => {
  const ids: string[] = [];
  for (const t of ["s1", "s2", "s3"]) {
    await seedTenant(db.store.db, t, { maxInFlight: 10 });
    ids.push(...(await seedDue(db.store.db, t, PER_TENANT, { target: { url: `${receiver.url}/t/${t}` } })).triggerIds);
  }
  await seedPool(db.store.db, "work", 20, { leaseMs: 20_000 });
  receiver.delayMs = 20;
  const executor = startSurvivor({ db: store.db, pollMs: 20, reapEveryMs: 200 });
  try {
    await receiver.waitFor((h) => h.length >= 60, 20_000, "deliveries under way");
    proxy.freeze();
    const frozenAt = Date.now();
    // Within the deadline (and a few loop passes), deliveries come again on new connections.
    await receiver.waitFor(
      (h) => h.some((x) => x.at > frozenAt + DEADLINE_MS),
      20_000,
      "a delivery after the connections went silent",
    );
    const resumedMs = receiver.hits.find((x) => x.at > frozenAt + DEADLINE_MS)!.at - frozenAt;
    const done = await until(
      () => statusCounts(db.store.db),
      (c) => (c.succeeded ?? 0) === ids.length,
      // A run whose settle was lost with its connection is re-run after its lease.
      60_000,
      "every trigger succeeded",
    );
    const report = deliveryReport(receiver.hits, ids);
    console.log(
      JSON.stringify({
        drill: "postgres-silent",
        resumedMs,
        poolReplacements: store.poolReplacements(),
        counts: done,
        ...report,
      }),
    );
    expect(store.poolReplacements()).toBeGreaterThanOrEqual(1);
    expect(report.lost).toBe(0);
    expect(executor.stats.loopErrors).toBeGreaterThan(0);
  } finally {
    await executor.stop(1000);
  }
});
