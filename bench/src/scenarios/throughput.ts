// 1. throughput — N no-op triggers due now across 100 tenants (caps high), in-process no-op handler.
// Fairway end to end (fair claim → pool dispatch → batched settle recording the attempt) against
// graphile-worker, pg-boss and the raw SKIP LOCKED limit, each on its own fresh database, in one run.
import type { TestDb } from "../../../test/support/pg.ts";
import { benchDb } from "../lib/db.ts";
import { embeddedDb } from "../lib/embedded.ts";
import { runExecutorUntil } from "../lib/fairway.ts";
import { inTurn, type BenchContext, type Scenario, type TimedWindow } from "../lib/scenario.ts";
import { keyTriggers, seedTenants, seedTriggers, setPool, waitUntil } from "../lib/seed.ts";
import { graphileEnqueue, graphileStart } from "../peers/graphile.ts";
import { pgbossEnqueue, pgbossStart, PGBOSS_CONFIG } from "../peers/pgboss.ts";
import { rawDrain, rawSetup } from "../peers/raw.ts";
import { sql } from "@fairway/store";

const TENANTS = 100;
/** Pool concurrency: enough free slots that each claim fills a big batch. */
const CONCURRENCY = 1000;

/** `open`: the machine's Postgres, or Fairway's embedded one (the `npm start` default); `keys`: that
 *  many fairness keys over the tenants (seed.ts, keyTriggers), 0 for none. */
export async function fairway(
  n: number,
  open: (max: number) => Promise<TestDb> = benchDb,
  keys = 0,
  window?: TimedWindow,
): Promise<number> {
  const tdb = await open(10);
  try {
    const tenants = await seedTenants(tdb.store.db, { prefix: "t", count: TENANTS, maxInFlight: 100_000 }, "noop");
    await setPool(tdb.store.db, "noop", CONCURRENCY);
    await seedTriggers(tdb.store.db, tenants, n / TENANTS, "noop");
    if (keys > 0) await keyTriggers(tdb.store.db, keys / TENANTS);
    await tdb.store.db.execute(sql`VACUUM ANALYZE`);
    const { ms } = await runExecutorUntil({
      db: tdb.store.db,
      handlers: { noop: async () => {} },
      settled: n,
      timeoutMs: 300_000,
      window,
    });
    return (n / ms) * 1000;
  } finally {
    await tdb.drop();
  }
}

async function graphile(n: number): Promise<number> {
  const tdb = await benchDb(1);
  try {
    await graphileEnqueue(
      tdb.url,
      "noop",
      Array.from({ length: n }, (_, i) => ({ t: i % TENANTS })),
    );
    let done = 0;
    const t0 = performance.now();
    const runner = await graphileStart(tdb.url, { noop: async () => void done++ });
    await waitUntil(() => done >= n, 300_000, "graphile-worker jobs");
    const ms = performance.now() - t0;
    await runner.stop();
    return (n / ms) * 1000;
  } finally {
    await tdb.drop();
  }
}

async function pgboss(n: number): Promise<number> {
  const tdb = await benchDb(1);
  const boss = await pgbossStart(tdb.url, "noop");
  try {
    await pgbossEnqueue(boss, "noop", n);
    let done = 0;
    const t0 = performance.now();
    await boss.work("noop", PGBOSS_CONFIG, async (jobs) => void (done += jobs.length));
    await waitUntil(() => done >= n, 300_000, "pg-boss jobs");
    const ms = performance.now() - t0;
    return (n / ms) * 1000;
  } finally {
    await boss.stop({ graceful: false, wait: true }).catch(() => {});
    await tdb.drop();
  }
}

async function raw(n: number): Promise<number> {
  const tdb = await benchDb(1);
  try {
    await rawSetup(tdb.url, n);
    const t0 = performance.now();
    const done = await rawDrain(tdb.url);
    return (done / (performance.now() - t0)) * 1000;
  } finally {
    await tdb.drop();
  }
}

export const throughput: Scenario = {
  name: "throughput",
  title: "no-op triggers/s end to end, Fairway vs graphile-worker vs pg-boss vs raw SKIP LOCKED",
  headline: {
    label: "throughput",
    keys: ["fairway_per_s", "ratio_vs_graphile", "ratio_vs_raw", "ratio_vs_pgboss", "ratio_10k_keys_vs_none"],
  },
  async run(ctx: BenchContext) {
    const n = ctx.quick ? 5_000 : 50_000;
    // pg-boss (~25 s a run) goes first. The raw loop, graphile-worker and Fairway then run back to
    // back, each run starting one further along (inTurn), so that none of them always runs in the same
    // place while the machine drifts (a peer always measured first sees a different machine).
    const pgboss_per_s = await pgboss(n);
    ctx.log(`pg-boss ${Math.round(pgboss_per_s)}/s`);
    const { raw_per_s, graphile_per_s, fairway_per_s, embedded_per_s, keys_per_s } = await inTurn(
      ctx,
      ["raw_per_s", "raw", () => raw(n)],
      ["graphile_per_s", "graphile-worker", () => graphile(n)],
      ["fairway_per_s", "fairway", () => fairway(n)],
      ["embedded_per_s", "fairway (embedded Postgres)", () => fairway(n, embeddedDb)],
      // The same triggers spread over 10k fairness keys (100 per tenant): the two-level claim.
      ["keys_per_s", "fairway (10k keys)", () => fairway(n, benchDb, 10_000)],
    );
    ctx.shared.set("fairway_per_s", fairway_per_s);
    return {
      fairway_per_s,
      graphile_per_s,
      pgboss_per_s,
      raw_per_s,
      embedded_per_s,
      keys_per_s,
      ratio_10k_keys_vs_none: keys_per_s / fairway_per_s,
      ratio_embedded_vs_postgres: embedded_per_s / fairway_per_s,
      ratio_vs_graphile: fairway_per_s / graphile_per_s,
      ratio_vs_pgboss: fairway_per_s / pgboss_per_s,
      ratio_vs_raw: fairway_per_s / raw_per_s,
    };
  },
};
