// Per-key caps (store claim-keys.ts, keyedIds; tenant_keys.running) across executor processes: each key of
// one tenant is capped at CAP, the tenant itself far above. Three executor processes work through the
// keys' backlogs; then, in the second drill, one of them is killed with -9 while its keys are at their
// caps. Over-cap events are counted from both sides: the receiver's open requests per key (what the
// target sees) and the keys' running counts sampled from Postgres (what the claim is checked against).
// Nothing may be lost, nothing may go over a key's cap, and nothing is left counted afterwards.
import { expect, it } from "vitest";
import { query, setKeyDefaults, sql } from "@fairway/store";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "./support/children.ts";
import { attemptAnomalies, deliveryReport, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, useDrill } from "./support/drill.ts";

const CAP = 3;
const KEYS = ["k0", "k1", "k2", "k3", "k4"];
const PER_KEY = 40;
const TOTAL = KEYS.length * PER_KEY;

useDrill("test");

async function seed(): Promise<string[]> {
  await seedTenant(db.store.db, "keyed", { maxInFlight: 100 });
  await setKeyDefaults(db.store.db, "keyed", { maxInFlight: CAP, ratePerSecond: null, weight: 1 });
  // A timeout longer than the drill: held requests wait while the other processes start. A lease that
  // a loaded machine still renews in time: a lapse would re-run a live trigger and blur the count of
  // duplicates the kill alone makes.
  await seedPool(db.store.db, "work", 20, { leaseMs: 4000, timeoutMs: 120_000 });
  const ids: string[] = [];
  for (const key of KEYS) {
    // The receiver counts open requests per /t/<name>: one name per key.
    const { triggerIds } = await seedDue(db.store.db, "keyed", PER_KEY, {
      target: { url: `${receiver.url}/t/${key}` },
      maxAttempts: 5,
      key,
    });
    ids.push(...triggerIds);
  }
  return ids;
}

/** Samples the keys' running counts in the background until stop(): the most any key had, and the
 *  samples in which one was over its cap. */
function sampler() {
  const s = { most: 0, over: 0, samples: 0 };
  let on = true;
  const loop = (async () => {
    while (on) {
      const [r] = await query<{ most: number; counted: number }>(
        db.store.db,
        sql`SELECT (SELECT coalesce(max(n), 0)::int FROM (SELECT count(*) AS n FROM triggers
                     WHERE status = 'running' AND NOT standby AND key IS NOT NULL GROUP BY key) x) AS most,
                   (SELECT coalesce(max(running), 0)::int FROM tenant_keys) AS counted`,
      );
      s.samples++;
      s.most = Math.max(s.most, r.most, r.counted);
      if (r.most > CAP || r.counted > CAP) s.over++;
      await new Promise((res) => setTimeout(res, 5));
    }
  })();
  return {
    s,
    async stop() {
      on = false;
      await loop;
    },
  };
}

/** Three executor processes, all running before any request is answered: the first to start claims
 *  every key to its cap, and its requests are held until the drill lets them go. */
async function startThree(first: string) {
  receiver.mode = { kind: "hold" };
  const child = await startExecutorChild({ DATABASE_URL: db.url, OWNER: first, REAP_MS: "200" });
  const atCaps = () =>
    query<{ full: number }>(db.store.db, sql`SELECT count(*)::int AS full FROM tenant_keys WHERE running >= ${CAP}`);
  await until(atCaps, ([r]) => r.full === KEYS.length, 30_000, "every key at its cap");
  const others = [];
  for (const owner of ["e2", "e3"])
    others.push(await startExecutorChild({ DATABASE_URL: db.url, OWNER: owner, REAP_MS: "200" }));
  return [child, ...others];
}

/** Lets the held requests go and answers the rest in 40 ms; once every trigger succeeded, the sampler's
 *  figures and the receiver's report. */
async function releaseAndDrain(sampling: ReturnType<typeof sampler>, ids: string[]) {
  receiver.mode = { kind: "ok" };
  receiver.delayMs = 40;
  receiver.release();
  await until(
    () => statusCounts(db.store.db),
    (c) => c.succeeded === TOTAL,
    60_000,
    "all triggers succeeded",
  );
  await sampling.stop();
  return { s: sampling.s, report: deliveryReport(receiver.hits, ids) };
}

const overCapAtTarget = () => KEYS.filter((k) => (receiver.maxOpen.get(k) ?? 0) > CAP).length;

async function settledClean() {
  expect(await attemptAnomalies(db.store.db)).toEqual([]);
  expect(await queueDrift(db.store.db)).toEqual(NO_DRIFT);
  const [{ running, keyRunning, queued }] = await query<{ running: number; keyRunning: number; queued: number }>(
    db.store.db,
    sql`SELECT (SELECT coalesce(sum(running), 0)::int FROM tenant_pools) AS running,
               (SELECT coalesce(sum(running), 0)::int FROM tenant_keys) AS "keyRunning",
               (SELECT coalesce(sum(queued), 0)::int FROM tenant_keys) AS queued`,
  );
  expect({ running, keyRunning, queued }).toEqual({ running: 0, keyRunning: 0, queued: 0 });
}

it("3 executor processes: every key works at its cap and never over it", { timeout: 90_000 }, async () => {
  const ids = await seed();
  const sampling = sampler();
  const three = await startThree("e1");
  const { s, report } = await releaseAndDrain(sampling, ids);
  const open = Object.fromEntries(KEYS.map((k) => [k, receiver.maxOpen.get(k) ?? 0]));
  const claimed = [];
  for (const c of three) claimed.push((await c.stop())?.claimed ?? 0);
  console.log(JSON.stringify({ drill: "key-caps", ...report, open, ...s, claimedPerProcess: claimed }));
  expect(report.lost).toBe(0);
  expect(report.duplicates).toBe(0);
  expect(overCapAtTarget()).toBe(0);
  expect(s.over).toBe(0);
  expect(s.samples).toBeGreaterThan(20);
  // Fully used: every key reached its cap at the target.
  expect(Object.values(open)).toEqual(KEYS.map(() => CAP));
  await settledClean();
});

it("kill -9 of an executor with keys at their caps: lost 0, never over a key's cap", { timeout: 90_000 }, async () => {
  const ids = await seed();
  const sampling = sampler();
  const [victim] = await startThree("victim");
  // Counted runs, and the keys' next triggers it holds on standby (store standby.ts: not counted, at
  // most one per counted run of their key there).
  const [{ held, standby }] = await query<{ held: number; standby: number }>(
    db.store.db,
    sql`SELECT count(*) FILTER (WHERE NOT standby)::int AS held, count(*) FILTER (WHERE standby)::int AS standby
          FROM triggers WHERE status = 'running' AND lease_token IN (SELECT token FROM leases WHERE owner = 'victim')`,
  );
  victim.signal("SIGKILL");
  expect(await victim.exited).toBe(null);
  // The victim's requests die with it; the survivors' claims meet keys still counted at their caps
  // until the victim's leases expire and are reaped.
  const { s, report } = await releaseAndDrain(sampling, ids);
  console.log(JSON.stringify({ drill: "kill9-keys", ...report, heldAtKill: held, standbyAtKill: standby, ...s }));
  expect(held).toBe(KEYS.length * CAP);
  expect(standby).toBeLessThanOrEqual(KEYS.length * CAP);
  expect(report.lost).toBe(0);
  expect(report.foreign).toBe(0);
  // Only runs the victim had started can go twice: at most its keys' caps.
  expect(report.duplicates).toBeLessThanOrEqual(KEYS.length * CAP);
  expect(overCapAtTarget()).toBe(0);
  expect(s.over).toBe(0);
  expect(s.most).toBe(CAP);
  await settledClean();
});
