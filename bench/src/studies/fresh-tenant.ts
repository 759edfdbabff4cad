// Design study: how long a tenant that comes due waits to start while a
// busy tenant keeps the pool's queue full. Not part of `npm run bench`; run it by hand, on an otherwise
// quiet machine:
//
//   [PROBES=15] npx tsx bench/src/studies/fresh-tenant.ts
//
// One executor, a pool of 50 slots, 2 ms in-process jobs. A busy tenant (cap 5000, so that its claimed
// triggers fill the pool's whole prefetch queue) has 40,000 due. Once it has run 3,000, each of PROBES idle
// tenants in turn is given one trigger due now (the executor is woken, as the API's wake-up hint does);
// the figure is the time from that insert to the trigger's start. Prints one JSON line: p50, max and all.
import { benchDb } from "../lib/db.ts";
import { handlerExecutor } from "../lib/fairway.ts";
import { seedTenants, seedTriggers, setPool, sleep, waitUntil } from "../lib/seed.ts";

const PROBES = Number(process.env.PROBES ?? 15);

const tdb = await benchDb(10);
const starts = new Map<string, number>();
let busyStarted = 0;
const { executor, stop } = handlerExecutor(tdb.store.db, {
  work: async (ctx) => {
    if (ctx.tenantId.startsWith("idle")) starts.set(ctx.tenantId, performance.now());
    else busyStarted++;
    await sleep(2);
  },
});
const waits: number[] = [];
try {
  const db = tdb.store.db;
  await setPool(db, "work", 50);
  const [busy] = await seedTenants(db, { prefix: "busy", count: 1, maxInFlight: 5000 }, "work");
  const idle = await seedTenants(db, { prefix: "idle", count: PROBES, maxInFlight: 50 }, "work");
  await seedTriggers(db, [busy], 40_000, "work");
  executor.start();
  await waitUntil(() => busyStarted >= 3000, 60_000, "the busy tenant running");
  for (const tenant of idle) {
    const t0 = performance.now();
    await seedTriggers(db, [tenant], 1, "work", new Date());
    executor.wake();
    await waitUntil(() => starts.has(tenant), 30_000, "the idle tenant's trigger started", 1);
    waits.push(starts.get(tenant)! - t0);
    await sleep(200);
  }
} finally {
  await stop();
  await tdb.drop();
}
waits.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    p50_ms: Math.round(waits[waits.length >> 1]),
    max_ms: Math.round(waits[waits.length - 1]),
    all_ms: waits.map(Math.round),
  }),
);
