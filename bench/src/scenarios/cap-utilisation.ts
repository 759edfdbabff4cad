// cap-utilisation — a capped tenant keeps its whole cap busy. One tenant with maxInFlight C, a pool of
// 20 slots (more than the cap), N = 20·C jobs due at once, an HTTP target answering in D ms. The least
// possible makespan, from the first start to the last answer, is N·D/C; the figure is the measured makespan over it (1.0 is ideal), for caps 1,
// 5 and 20 and targets of 20 and 100 ms. Also: the share of the target's samples that saw the tenant
// at its cap while it still had work to start (after its first round). The 100 ms cases run again on
// Fairway's embedded PostgreSQL (the `npm start` default).
import type { TestDb } from "../../../test/support/pg.ts";
import { benchDb } from "../lib/db.ts";
import { embeddedDb } from "../lib/embedded.ts";
import { httpExecutors, seedHttpTenants } from "../lib/http-fairness.ts";
import type { BenchContext, Figures, Scenario } from "../lib/scenario.ts";
import { startSlowTarget } from "../lib/slow-target.ts";
import { sleep, waitUntil } from "../lib/seed.ts";

const CAPS = [1, 5, 20];
const DELAYS = [20, 100];
const POOL = 20;

async function makespan(
  cap: number,
  delayMs: number,
  rounds: number,
  open: (max: number) => Promise<TestDb> = benchDb,
): Promise<{ ratio: number; atCapPct: number }> {
  const tdb = await open(10);
  const target = await startSlowTarget();
  const { executors, stop } = httpExecutors(tdb.store.db, 1);
  try {
    const n = cap * rounds;
    const [id] = await seedHttpTenants(tdb.store.db, target, delayMs, POOL, [
      { prefix: "cap", maxInFlight: cap, jobs: n },
    ]);
    let samples = 0;
    let atCap = 0;
    executors[0].start();
    await waitUntil(() => target.arrivals.length > 0, 30_000, "the first delivery", 1);
    // From the first start: the executor's own start-up (pool load, first claim) is not the cap's.
    const t0 = performance.now();
    const firstRound = t0 + delayMs;
    await waitUntil(
      () => {
        const now = performance.now();
        if (now > firstRound && target.arrivals.length < n) {
          samples++;
          if ((target.open.get(id) ?? 0) >= cap) atCap++;
        }
        return target.answered >= n;
      },
      120_000,
      `${n} answered`,
      2,
    );
    const ms = performance.now() - t0;
    return { ratio: ms / ((n * delayMs) / cap), atCapPct: samples ? (100 * atCap) / samples : 100 };
  } finally {
    await stop();
    await target.close();
    await sleep(10);
    await tdb.drop();
  }
}

export const capUtilisation: Scenario = {
  name: "cap-utilisation",
  title: `makespan ÷ N·D/C of one tenant capped at C in a ${POOL}-slot pool (HTTP target answering in D ms; 1.0 is ideal)`,
  headline: {
    label: "cap-utilisation",
    keys: ["cap5_100ms", "cap20_100ms", "cap1_100ms", "cap5_20ms", "embedded_cap5_100ms", "embedded_cap20_100ms"],
  },
  async run(ctx: BenchContext): Promise<Figures> {
    const rounds = ctx.quick ? 5 : 20;
    const out: Figures = {};
    for (const d of DELAYS) {
      for (const c of CAPS) {
        const r = await makespan(c, d, rounds);
        out[`cap${c}_${d}ms`] = r.ratio;
        out[`cap${c}_${d}ms_at_cap_pct`] = r.atCapPct;
        ctx.log(
          `cap ${c}, ${d} ms: makespan ${r.ratio.toFixed(2)}× ideal, at cap in ${r.atCapPct.toFixed(0)} % of samples`,
        );
      }
    }
    for (const c of CAPS) {
      const r = await makespan(c, 100, rounds, embeddedDb);
      out[`embedded_cap${c}_100ms`] = r.ratio;
      out[`embedded_cap${c}_100ms_at_cap_pct`] = r.atCapPct;
      ctx.log(
        `embedded: cap ${c}, 100 ms: makespan ${r.ratio.toFixed(2)}× ideal, at cap in ${r.atCapPct.toFixed(0)} % of samples`,
      );
    }
    return out;
  },
};
