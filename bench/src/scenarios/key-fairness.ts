// key-fairness — the two-level claim (store claim-keys.ts, keyedIds) seen from an HTTP target, in counts.
//  - noisy key: one tenant; key A has 2,000 due jobs older than anything else, keys B–K 10 each; a
//    10-slot pool, a 20 ms target. The figure: the starts the target saw by the time B–K's last job
//    arrived, with A ÷ without A (≤ 1.5).
//  - key cap: one tenant, one key capped at C = 5 beside two uncapped keys, N = 20·C jobs of the capped
//    key, a 20-slot pool, a 100 ms target, three executors. Over-cap events: arrivals at which the
//    capped key had more than C requests open at the target (0); makespan of the capped key, first
//    start to last answer, ÷ N·D/C (≤ 1.2).
//  - shares: keys weighted 1:3 in one tenant; and two tenants 1:1, one of them with keys 1:1:2. The
//    largest distance, in jobs, between a key's starts and its share over every prefix of the first 120
//    starts (≤ 2). The 1:3 case again on the embedded PostgreSQL (the `npm start` default).
import { putKeyOverride, setKeyDefaults, type Db } from "@fairway/store";
import type { TestDb } from "../../../test/support/pg.ts";
import { seedDue, seedPool, seedTenant } from "../../../test/support/seed.ts";
import { benchDb } from "../lib/db.ts";
import { embeddedDb } from "../lib/embedded.ts";
import { httpExecutors, maxPrefixLag } from "../lib/http-fairness.ts";
import type { BenchContext, Figures, Scenario } from "../lib/scenario.ts";
import { sleep, waitUntil } from "../lib/seed.ts";
import { startSlowTarget, type SlowTarget } from "../lib/slow-target.ts";

interface Flow {
  tenant: string;
  key: string | null;
  jobs: number;
  /** Older than everything else (a backlog). */
  old?: boolean;
}

/** Seeds the flows (one label each at the target: `${tenant}.${key}`), runs `executors` executors until
 *  `done`, and returns what `measure` makes of the target. */
async function withFlows<T>(
  open: (max: number) => Promise<TestDb>,
  executors: number,
  pool: number,
  delayMs: number,
  setup: (db: Db) => Promise<void>,
  flows: Flow[],
  done: (t: SlowTarget) => boolean,
  measure: (t: SlowTarget, labels: string[]) => T,
): Promise<T> {
  const tdb = await open(10);
  const target = await startSlowTarget();
  const { executors: list, stop } = httpExecutors(tdb.store.db, executors);
  try {
    const db = tdb.store.db;
    await seedPool(db, "work", pool, { timeoutMs: 60_000 });
    const tenants = new Set<string>();
    for (const f of flows)
      if (!tenants.has(f.tenant)) {
        tenants.add(f.tenant);
        await seedTenant(db, f.tenant, { maxInFlight: 1000 });
      }
    await setup(db);
    const labels = flows.map((f) => `${f.tenant}.${f.key ?? "-"}`);
    const now = Date.now();
    for (const [i, f] of flows.entries())
      await seedDue(db, f.tenant, f.jobs, {
        type: "work",
        key: f.key,
        at: new Date(now - (f.old ? 3_600_000 : 1000)),
        target: { url: `${target.url}/${labels[i]}/${delayMs}` },
      });
    for (const e of list) e.start();
    await waitUntil(() => done(target), 120_000, "the flows' work", 5);
    return measure(target, labels);
  } finally {
    await stop();
    await target.close();
    await sleep(10);
    await tdb.drop();
  }
}

const SMALL = ["B", "C", "D", "E", "F", "G", "H", "I", "J", "K"];

/** Starts seen when B–K's last job arrived, with or without key A's backlog. */
async function noisyKey(withA: boolean, open = benchDb): Promise<number> {
  const flows: Flow[] = SMALL.map((k) => ({ tenant: "nk", key: k, jobs: 10 }));
  if (withA) flows.unshift({ tenant: "nk", key: "A", jobs: 2000, old: true });
  const small = new Set(SMALL.map((k) => `nk.${k}`));
  const smallDone = (t: SlowTarget) => t.arrivals.filter((a) => small.has(a)).length >= 100;
  return withFlows(
    open,
    1,
    10,
    20,
    async () => {},
    flows,
    smallDone,
    (t) => {
      let last = 0;
      t.arrivals.forEach((a, i) => {
        if (small.has(a)) last = i + 1;
      });
      return last;
    },
  );
}

const CAP = 5;
const CAP_DELAY_MS = 100;

/** Over-cap events and makespan ÷ N·D/C of a key capped at CAP, three executors. */
async function keyCap(): Promise<{ over: number; makespanRatio: number; most: number }> {
  const n = 20 * CAP;
  const label = "kc.capped";
  let over = 0;
  let most = 0;
  let first = 0;
  let last = 0;
  let seen = 0;
  return withFlows(
    benchDb,
    3,
    20,
    CAP_DELAY_MS,
    (db) => putKeyOverride(db, "kc", "capped", { maxInFlight: CAP }).then(() => {}),
    [
      { tenant: "kc", key: "capped", jobs: n },
      { tenant: "kc", key: "free1", jobs: 200 },
      { tenant: "kc", key: "free2", jobs: 200 },
    ],
    (t) => {
      // Sampled on every poll: the target's open count for the capped key, and its first and last.
      const open = t.open.get(label) ?? 0;
      most = Math.max(most, open);
      const arrived = t.arrivals.filter((a) => a === label).length;
      if (arrived > seen) {
        if (seen === 0) first = performance.now();
        seen = arrived;
      }
      if (open > CAP) over++;
      if (arrived >= n && open === 0 && last === 0) last = performance.now();
      return last > 0;
    },
    () => ({ over, most, makespanRatio: (last - first) / ((n * CAP_DELAY_MS) / CAP) }),
  );
}

/** The largest prefix deviation of the first 120 starts from the flows' shares. */
async function shares(flows: Flow[], share: number[], setup: (db: Db) => Promise<void>, open = benchDb) {
  return withFlows(
    open,
    1,
    10,
    100,
    setup,
    flows,
    (t) => t.arrivals.length >= 120,
    (t, labels) => maxPrefixLag(t.arrivals, labels, share, 120),
  );
}

const oneToThree = () =>
  shares(
    [
      { tenant: "s13", key: "light", jobs: 120 },
      { tenant: "s13", key: "heavy", jobs: 120 },
    ],
    [1, 3],
    (db) => putKeyOverride(db, "s13", "heavy", { weight: 3 }).then(() => {}),
  );

export const keyFairness: Scenario = {
  name: "key-fairness",
  title:
    "fairness keys: noisy key completion ratio, key cap over-cap events and makespan, share deviation at every prefix",
  headline: {
    label: "key-fairness",
    keys: [
      "noisy_key_ratio",
      "key_cap_over_cap_events",
      "key_cap_makespan_vs_ndc",
      "share_lag_jobs_1_3",
      "share_lag_jobs_tenants_x_keys",
    ],
  },
  async run(ctx: BenchContext): Promise<Figures> {
    const alone = await noisyKey(false);
    const noisy = await noisyKey(true);
    ctx.log(`noisy key: B–K done by start ${noisy} beside A, ${alone} alone`);
    const embeddedAlone = await noisyKey(false, embeddedDb);
    const embeddedNoisy = await noisyKey(true, embeddedDb);
    const cap = await keyCap();
    ctx.log(`key cap ${CAP}: most open ${cap.most}, over-cap events ${cap.over}`);
    const lag13 = await oneToThree();
    const lagEmbedded = await shares(
      [
        { tenant: "s13", key: "light", jobs: 120 },
        { tenant: "s13", key: "heavy", jobs: 120 },
      ],
      [1, 3],
      (db) => putKeyOverride(db, "s13", "heavy", { weight: 3 }).then(() => {}),
      embeddedDb,
    );
    const lagX = await shares(
      [
        { tenant: "sx-plain", key: null, jobs: 120 },
        { tenant: "sx-keyed", key: "a", jobs: 120 },
        { tenant: "sx-keyed", key: "b", jobs: 120 },
        { tenant: "sx-keyed", key: "c", jobs: 120 },
      ],
      [4, 1, 1, 2],
      async (db) => {
        await setKeyDefaults(db, "sx-keyed", { maxInFlight: null, ratePerSecond: null, weight: 1 });
        await putKeyOverride(db, "sx-keyed", "c", { weight: 2 });
      },
    );
    return {
      noisy_key_ratio: noisy / alone,
      noisy_key_ratio_embedded: embeddedNoisy / embeddedAlone,
      key_cap_over_cap_events: cap.over,
      key_cap_most_open: cap.most,
      key_cap_makespan_vs_ndc: cap.makespanRatio,
      share_lag_jobs_1_3: lag13,
      share_lag_jobs_1_3_embedded: lagEmbedded,
      share_lag_jobs_tenants_x_keys: lagX,
    };
  },
};
