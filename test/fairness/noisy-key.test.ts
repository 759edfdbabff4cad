// Noisy key: inside one tenant, key A has 2,000 due jobs, older than anything else, and keys B–K 10
// each (one pool, a receiver answering in 20 ms). B–K must complete within a small multiple of the starts
// they need with A absent: counted in starts seen by the receiver, not in time. FIFO within the tenant would run
// all of A first; the keys' fair share gives B–K 10 of every 11 slots while they are backlogged.
import { describe, expect, it } from "vitest";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { until } from "../support/until.ts";
import { useLiveExecutors } from "./live-executors.ts";

const SMALL = ["B", "C", "D", "E", "F", "G", "H", "I", "J", "K"];
const PER_SMALL = 10;

describe("noisy key", () => {
  const live = useLiveExecutors();

  /** Starts the receiver saw when the last of B–K's jobs arrived. */
  async function run(type: string, withNoisy: boolean): Promise<number> {
    const tenant = `${type}-t`;
    await seedPool(live.db, type, 10);
    await seedTenant(live.db, tenant, { maxInFlight: 1000 });
    const prefix = `/slow/20/${tenant}/`;
    if (withNoisy)
      await seedDue(live.db, tenant, 2000, {
        type,
        key: "A",
        at: new Date(Date.now() - 3_600_000),
        target: { url: `${live.receiver.url}${prefix}A` },
      });
    for (const k of SMALL)
      await seedDue(live.db, tenant, PER_SMALL, { type, key: k, target: { url: `${live.receiver.url}${prefix}${k}` } });
    live.start(1);
    const mine = async () => live.receiver.deliveries.filter((d) => d.path.startsWith(prefix)).map((d) => d.path);
    const seen = await until(
      mine,
      (paths) => paths.filter((p) => !p.endsWith("/A")).length >= SMALL.length * PER_SMALL,
      60_000,
    );
    let last = 0;
    seen.forEach((p, i) => {
      if (!p.endsWith("/A")) last = i + 1;
    });
    return last;
  }

  it("keys B–K complete within 2x the starts they need with A absent (the bench holds the 1.5x target)", async () => {
    const alone = await run("nk-alone", false);
    const noisy = await run("nk-noisy", true);
    console.info(`noisy key: B–K done by start ${noisy} beside a 2,000-job key, ${alone} alone`);
    expect(alone).toBe(SMALL.length * PER_SMALL);
    // FIFO within the tenant would put B–K behind all 2,000 of A's jobs (21x). The target is 1.5x, which
    // the `key-fairness` bench reports (noisy_key_ratio); here the bound is 2x: one run in a loaded full
    // suite has reached 1.53x, from the executor's claim batches, and this test guards the fairness, not
    // the last fraction of it.
    expect(noisy).toBeLessThanOrEqual(2 * alone);
  }, 120_000);
});
