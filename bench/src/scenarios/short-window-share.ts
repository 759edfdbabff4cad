// short-window-share — weighted shares hold from the first start. Three tenants with weights 1:2:5,
// caps out of the way (50), a 10-slot pool, 120 jobs each due at the same instant, an HTTP target
// answering in 100 ms. The figure is the largest distance, in jobs, between a tenant's starts and its
// weighted share over every prefix of the first 120 starts (in the order the target saw them). One
// executor, then two, then one on Fairway's embedded PostgreSQL (the `npm start` default).
import type { TestDb } from "../../../test/support/pg.ts";
import { benchDb } from "../lib/db.ts";
import { embeddedDb } from "../lib/embedded.ts";
import { httpExecutors, maxPrefixLag, seedHttpTenants } from "../lib/http-fairness.ts";
import type { BenchContext, Figures, Scenario } from "../lib/scenario.ts";
import { startSlowTarget } from "../lib/slow-target.ts";
import { sleep, waitUntil } from "../lib/seed.ts";

const WEIGHTS = [1, 2, 5];
const JOBS = 120;

async function lag(executorCount: number, open: (max: number) => Promise<TestDb> = benchDb): Promise<number> {
  const tdb = await open(10);
  const target = await startSlowTarget();
  const { executors, stop } = httpExecutors(tdb.store.db, executorCount);
  try {
    const ids = await seedHttpTenants(
      tdb.store.db,
      target,
      100,
      10,
      WEIGHTS.map((w, i) => ({ prefix: `w${i}_`, weight: w, maxInFlight: 50, jobs: JOBS })),
    );
    for (const e of executors) e.start();
    await waitUntil(() => target.arrivals.length >= JOBS, 60_000, `${JOBS} starts`, 5);
    return maxPrefixLag(target.arrivals, ids, WEIGHTS, JOBS);
  } finally {
    await stop();
    await target.close();
    await sleep(10);
    await tdb.drop();
  }
}

export const shortWindowShare: Scenario = {
  name: "short-window-share",
  title:
    "largest deviation from the weighted share (jobs) over every prefix of the first 120 starts, weights 1:2:5, a 10-slot pool",
  headline: {
    label: "short-window-share",
    keys: ["max_prefix_lag_jobs", "max_prefix_lag_jobs_2_executors", "max_prefix_lag_jobs_embedded"],
  },
  async run(_ctx: BenchContext): Promise<Figures> {
    return {
      max_prefix_lag_jobs: await lag(1),
      max_prefix_lag_jobs_2_executors: await lag(2),
      max_prefix_lag_jobs_embedded: await lag(1, embeddedDb),
    };
  },
};
