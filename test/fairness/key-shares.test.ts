// The two-level bound (docs/fairness.md, "Fairness keys"): keys share their tenant's part of a pool by
// weight from the first start, and tenants' and keys' weights multiply. Everything is backlogged from
// the same instant (caps out of the way, a 10-slot pool, a receiver answering in 100 ms); over every
// prefix of the first 120 starts the receiver sees, each key is within 2 jobs of its share.
import { describe, expect, it } from "vitest";
import { putKeyOverride } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { until } from "../support/until.ts";
import { useLiveExecutors } from "./live-executors.ts";

const JOBS = 120;

/** max over prefixes p ≤ n and flows i of |starts_i(p) − p · share_i|, and where it was. */
function worstPrefix(order: number[], share: number[], n: number): { lag: number; at: number; flow: number } {
  const count = share.map(() => 0);
  let worst = { lag: 0, at: 0, flow: 0 };
  order.slice(0, n).forEach((i, k) => {
    count[i]++;
    share.forEach((s, j) => {
      const lag = Math.abs(count[j] - (k + 1) * s);
      if (lag > worst.lag) worst = { lag, at: k + 1, flow: j };
    });
  });
  return worst;
}

describe("key shares over short windows", () => {
  const live = useLiveExecutors();

  async function flows(
    type: string,
    spec: Array<{ tenant: string; key: string | null }>,
    share: number[],
  ): Promise<{ lag: number; at: number; flow: number; order: string }> {
    const at = new Date(Date.now() - 1000);
    const paths = spec.map((f) => `/slow/100/${f.tenant}/${f.key ?? "-"}`);
    for (const [i, f] of spec.entries())
      await seedDue(live.db, f.tenant, JOBS, {
        type,
        at,
        key: f.key,
        target: { url: `${live.receiver.url}${paths[i]}` },
      });
    live.start(1);
    const starts = async () => live.receiver.deliveries.map((d) => paths.indexOf(d.path)).filter((i) => i >= 0);
    const order = await until(starts, (o) => o.length >= JOBS, 30_000);
    return { ...worstPrefix(order, share, JOBS), order: order.slice(0, JOBS).join("") };
  }

  it("keys weighted 1:3 in one tenant: every prefix of the first 120 starts within ±2 jobs", async () => {
    await seedPool(live.db, "ks13", 10);
    await seedTenant(live.db, "ks13-t", { maxInFlight: 50 });
    await putKeyOverride(live.db, "ks13-t", "heavy", { weight: 3 });
    const worst = await flows(
      "ks13",
      [
        { tenant: "ks13-t", key: "light" },
        { tenant: "ks13-t", key: "heavy" },
      ],
      [1 / 4, 3 / 4],
    );
    console.info(
      `keys 1:3: largest prefix deviation ${worst.lag} jobs (flow ${worst.flow}, prefix ${worst.at}); ${worst.order}`,
    );
    expect(worst.lag).toBeLessThanOrEqual(2);
  }, 60_000);

  it("tenants 1:1, one with keys 1:1:2: shares multiply, every prefix within ±2 jobs", async () => {
    await seedPool(live.db, "ksx", 10);
    await seedTenant(live.db, "ksx-plain", { maxInFlight: 50 });
    await seedTenant(live.db, "ksx-keyed", { maxInFlight: 50 });
    await putKeyOverride(live.db, "ksx-keyed", "c", { weight: 2 });
    const worst = await flows(
      "ksx",
      [
        { tenant: "ksx-plain", key: null },
        { tenant: "ksx-keyed", key: "a" },
        { tenant: "ksx-keyed", key: "b" },
        { tenant: "ksx-keyed", key: "c" },
      ],
      [1 / 2, 1 / 8, 1 / 8, 1 / 4],
    );
    console.info(
      `tenants 1:1, keys 1:1:2: largest prefix deviation ${worst.lag} jobs (flow ${worst.flow}, prefix ${worst.at}); ${worst.order}`,
    );
    expect(worst.lag).toBeLessThanOrEqual(2);
  }, 60_000);
});
