// 3. weighted-share — three always-backlogged tenants with weights 1:2:5 share one pool (caps out of
// the way) over a fixed window. Case "equal": every job takes the same time. Case "long": tenant 3's
// jobs take 10× longer — its share must be of worker time, not of job counts. Error = max over
// tenants of |measured share − weight share| / weight share; Jain's index of shares ÷ weight.
import { benchDb } from "../lib/db.ts";
import { handlerExecutor } from "../lib/fairway.ts";
import type { BenchContext, Figures, Scenario } from "../lib/scenario.ts";
import { seedTenants, seedTriggers, setPool, sleep } from "../lib/seed.ts";
import { jain } from "../lib/stats.ts";

const WEIGHTS = [1, 2, 5];
const CONCURRENCY = 16;
const JOB_MS = 4;

interface Tally {
  n: number;
  ms: number;
}

async function window(ctx: BenchContext, longFactor: number): Promise<{ count: number[]; time: number[] }> {
  const tdb = await benchDb(10);
  const tally = new Map<string, Tally>();
  let measuring = false;
  const ids: string[] = [];
  const { executor, stop } = handlerExecutor(tdb.store.db, {
    work: async (c) => {
      const started = performance.now();
      await sleep(c.tenantId === ids[2] ? JOB_MS * longFactor : JOB_MS);
      if (!measuring) return;
      const t = tally.get(c.tenantId) ?? { n: 0, ms: 0 };
      t.n++;
      t.ms += performance.now() - started;
      tally.set(c.tenantId, t);
    },
  });
  try {
    const db = tdb.store.db;
    await setPool(db, "work", CONCURRENCY);
    for (const [i, w] of WEIGHTS.entries()) {
      ids.push(...(await seedTenants(db, { prefix: `w${i}_`, count: 1, weight: w, maxInFlight: 1000 }, "work")));
    }
    // Enough work that nobody runs dry inside the window (the pool does at most CONCURRENCY/JOB_MS per ms).
    const secs = ctx.quick ? 2 : 6;
    await seedTriggers(db, ids, Math.ceil((CONCURRENCY / JOB_MS) * 1000 * (secs + 1)), "work");
    executor.start();
    await sleep(ctx.quick ? 500 : 1500); // warm-up: the cost estimates converge
    measuring = true;
    await sleep(secs * 1000);
    measuring = false;
    const t = ids.map((id) => tally.get(id) ?? { n: 0, ms: 0 });
    return { count: t.map((x) => x.n), time: t.map((x) => x.ms) };
  } finally {
    await stop();
    await tdb.drop();
  }
}

/** Max relative error of shares vs weights (percent) and Jain's index of share ÷ weight. */
function shareError(xs: number[]): { errPct: number; jain: number } {
  const total = xs.reduce((a, b) => a + b, 0);
  const wsum = WEIGHTS.reduce((a, b) => a + b, 0);
  const norm = xs.map((x, i) => x / total / (WEIGHTS[i] / wsum));
  return { errPct: Math.max(...norm.map((r) => Math.abs(r - 1))) * 100, jain: jain(norm) };
}

export const weights: Scenario = {
  name: "weighted-share",
  title:
    "share of a backlogged pool for weights 1:2:5, by count (equal jobs) and by worker time (tenant 3's jobs 10× longer)",
  headline: {
    label: "weights",
    keys: ["max_share_error_pct_count", "max_share_error_pct_time", "jain_count", "jain_time"],
  },
  async run(ctx: BenchContext): Promise<Figures> {
    const equal = await window(ctx, 1);
    const long = await window(ctx, 10);
    const byCount = shareError(equal.count);
    const byTime = shareError(long.time);
    ctx.log(`equal jobs, counts ${equal.count.join(":")}; long jobs, worker ms ${long.time.map(Math.round).join(":")}`);
    return {
      max_share_error_pct_count: byCount.errPct,
      max_share_error_pct_time: byTime.errPct,
      jain_count: byCount.jain,
      jain_time: byTime.jain,
      // For reference: with long jobs, counts are NOT expected to follow the weights.
      long_case_count_error_pct: shareError(long.count).errPct,
      runs_in_window: equal.count.reduce((a, b) => a + b, 0),
    };
  },
};
