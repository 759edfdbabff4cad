// 2. noisy-neighbour — tenant A has a big backlog; while it drains, 20 small tenants submit 100
// triggers each at the same moment. Pool concurrency 50, every tenant capped at 50, 2 ms jobs. Each
// small tenant's completion time (submit → its last run ends) is compared with a baseline run
// without A, on Fairway and on graphile-worker (FIFO, same concurrency) side by side.
import { benchDb } from "../lib/db.ts";
import { handlerExecutor } from "../lib/fairway.ts";
import type { BenchContext, Scenario } from "../lib/scenario.ts";
import { seedTenants, seedTriggers, setPool, sleep, waitUntil } from "../lib/seed.ts";
import { percentile } from "../lib/stats.ts";
import { graphileEnqueue, graphileStart } from "../peers/graphile.ts";
import { makeWorkerUtils } from "graphile-worker";

const SMALL_TENANTS = 20;
const CONCURRENCY = 50;
const JOB_MS = 2;

interface Sizes {
  noisy: number;
  small: number;
}

/** Per small tenant: ms from submission to its last run's end. */
type Completion = number[];

async function fairwayRun(s: Sizes, withNoisy: boolean): Promise<Completion> {
  const tdb = await benchDb(10);
  const ends = new Map<string, { n: number; last: number }>();
  const { executor, stop } = handlerExecutor(tdb.store.db, {
    work: async (ctx) => {
      await sleep(JOB_MS);
      const e = ends.get(ctx.tenantId) ?? { n: 0, last: 0 };
      e.n++;
      e.last = performance.now();
      ends.set(ctx.tenantId, e);
    },
  });
  try {
    const db = tdb.store.db;
    await setPool(db, "work", CONCURRENCY);
    const [noisy] = await seedTenants(db, { prefix: "noisy", count: 1, maxInFlight: 50 }, "work");
    const small = await seedTenants(db, { prefix: "small", count: SMALL_TENANTS, maxInFlight: 50 }, "work");
    if (withNoisy) await seedTriggers(db, [noisy], s.noisy, "work");
    executor.start();
    if (withNoisy) await waitUntil(() => (ends.get(noisy)?.n ?? 0) >= 200, 60_000, "noisy tenant running");
    const t0 = performance.now();
    await seedTriggers(db, small, s.small, "work", new Date());
    executor.wake();
    await waitUntil(() => small.every((t) => (ends.get(t)?.n ?? 0) >= s.small), 300_000, "small tenants done");
    return small.map((t) => ends.get(t)!.last - t0);
  } finally {
    await stop();
    await tdb.drop();
  }
}

async function graphileRun(s: Sizes, withNoisy: boolean): Promise<Completion> {
  const tdb = await benchDb(1);
  const ends = new Map<string, { n: number; last: number }>();
  try {
    await graphileEnqueue(tdb.url, "work", withNoisy ? Array.from({ length: s.noisy }, () => ({ t: "noisy" })) : []);
    const runner = await graphileStart(
      tdb.url,
      {
        work: async (payload) => {
          await sleep(JOB_MS);
          const t = (payload as { t: string }).t;
          const e = ends.get(t) ?? { n: 0, last: 0 };
          e.n++;
          e.last = performance.now();
          ends.set(t, e);
        },
      },
      { concurrentJobs: CONCURRENCY },
    );
    try {
      if (withNoisy) await waitUntil(() => (ends.get("noisy")?.n ?? 0) >= 200, 60_000, "noisy tenant running");
      const small = Array.from({ length: SMALL_TENANTS }, (_, i) => `small${i}`);
      const utils = await makeWorkerUtils({ connectionString: tdb.url });
      const t0 = performance.now();
      await utils.addJobs(
        small.flatMap((t) => Array.from({ length: s.small }, () => ({ identifier: "work", payload: { t } }))),
      );
      await utils.release();
      await waitUntil(
        () => small.every((t) => (ends.get(t)?.n ?? 0) >= s.small),
        300_000,
        "graphile small tenants done",
      );
      return small.map((t) => ends.get(t)!.last - t0);
    } finally {
      await runner.stop();
    }
  } finally {
    await tdb.drop();
  }
}

export const noisy: Scenario = {
  name: "noisy-neighbour",
  title: "small tenants' completion time with a noisy tenant vs without, Fairway vs graphile-worker FIFO",
  headline: { label: "noisy", keys: ["small_p99_vs_alone", "graphile_small_p99_vs_alone"] },
  async run(ctx: BenchContext) {
    const s: Sizes = ctx.quick ? { noisy: 3_000, small: 20 } : { noisy: 20_000, small: 100 };
    const alone = await fairwayRun(s, false);
    const mixed = await fairwayRun(s, true);
    ctx.log(
      `fairway small p99 alone ${Math.round(percentile(alone, 99))} ms, with A ${Math.round(percentile(mixed, 99))} ms`,
    );
    const gAlone = await graphileRun(s, false);
    const gMixed = await graphileRun(s, true);
    ctx.log(
      `graphile small p99 alone ${Math.round(percentile(gAlone, 99))} ms, with A ${Math.round(percentile(gMixed, 99))} ms`,
    );
    return {
      small_p50_ms: percentile(mixed, 50),
      small_p99_ms: percentile(mixed, 99),
      small_alone_p99_ms: percentile(alone, 99),
      small_p99_vs_alone: percentile(mixed, 99) / percentile(alone, 99),
      graphile_small_p50_ms: percentile(gMixed, 50),
      graphile_small_p99_ms: percentile(gMixed, 99),
      graphile_small_alone_p99_ms: percentile(gAlone, 99),
      graphile_small_p99_vs_alone: percentile(gMixed, 99) / percentile(gAlone, 99),
    };
  },
};
