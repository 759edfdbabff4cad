// Quota plans end to end, on the embedded default and on a real Postgres, through the SDK against the
// server process and a real receiver: a plan's cap holds at the receiver for every tenant on it and a
// value a tenant set itself wins; a PATCH of the plan moves every tenant on it (a higher cap, a higher
// weight) from their next claim; a plan in use cannot be deleted. The caps are read from the arrival
// times of slow requests: two arrivals of one tenant closer than the receiver's delay were open at
// once, so no wall-clock figure decides a pass.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createAdminClient,
  createClient,
  FairwayError,
  type FairwayAdminClient,
  type FairwayClient,
} from "@fairway/sdk";
import { serverBackends } from "../support/backends.ts";
import { startFairway, type FairwayProcess } from "../support/fairway-process.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";

const ADMIN = `fwadmin_plans_${Date.now()}`;
const SLOW_MS = 1200;

describe.each(serverBackends)("quota plans on %s", (_name, backend) => {
  let server: FairwayProcess;
  let rx: Receiver;
  let done: () => Promise<void>;
  let admin: FairwayAdminClient;
  const clients = new Map<string, FairwayClient>();

  const tenant = async (id: string, input: Record<string, unknown>) => {
    const t = await admin.tenants.create({ id, name: id, ...input });
    rx.secrets.push(t.signingSecret);
    clients.set(id, createClient({ baseUrl: server.url, apiKey: (await admin.tenants.createKey(id)).key }));
    return t;
  };
  /** `n` slow jobs of `id`, all due at once (`at`), at /slow/SLOW_MS/<label>. */
  const slowJobs = async (id: string, label: string, n: number, at: Date) => {
    const r = await clients.get(id)!.jobs.createMany(
      Array.from({ length: n }, (_, i) => ({
        name: `${label}-${i}`,
        schedule: { at },
        target: { url: `${rx.url}/slow/${SLOW_MS}/${label}` },
      })),
    );
    expect(r.results.map((x) => x.status)).toEqual(r.results.map(() => 201));
  };
  const arrivals = (label: string) =>
    rx.deliveries.filter((d) => d.path === `/slow/${SLOW_MS}/${label}`).map((d) => d.at);
  /** The most requests of `label` open at once, from their arrivals: each stays open SLOW_MS at least,
   *  so arrivals i and i+k-1 closer than that mean k open together. */
  const mostOpen = (label: string) => {
    const at = arrivals(label).sort((a, b) => a - b);
    let most = at.length > 0 ? 1 : 0;
    for (let k = 2; k <= at.length; k++) {
      for (let i = 0; i + k - 1 < at.length; i++) if (at[i + k - 1]! - at[i]! < SLOW_MS) most = k;
    }
    return most;
  };

  beforeAll(async () => {
    const b = await backend();
    done = b.done;
    rx = await startReceiver();
    server = await startFairway({ ...b.env, FAIRWAY_ADMIN_TOKEN: ADMIN });
    admin = createAdminClient({ baseUrl: server.url, adminToken: ADMIN });
    await admin.pools.put("webhook", { concurrency: 20, timeoutMs: 30_000 });
    await admin.pools.put("weighted", { concurrency: 1, timeoutMs: 30_000 });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rx?.close();
    await done?.();
  });

  it("the plan's cap holds for each tenant on it, a tenant's own cap wins, and a PATCH raises every tenant's", async () => {
    await admin.plans.create({ id: "tier", name: "Tier", maxInFlight: 1 });
    await tenant("alpha", { plan: "tier" });
    await tenant("beta", { plan: "tier" });
    const gamma = await tenant("gamma", { plan: "tier", maxInFlight: 3 });
    expect([gamma.plan, gamma.maxInFlight, gamma.overrides]).toEqual(["tier", 3, { maxInFlight: 3 }]);

    const at = new Date(Date.now() + 1500);
    for (const id of ["alpha", "beta", "gamma"]) await slowJobs(id, `${id}-1`, 3, at);
    await rx.waitFor(() => ["alpha", "beta", "gamma"].every((id) => arrivals(`${id}-1`).length === 3), 60_000);
    expect([mostOpen("alpha-1"), mostOpen("beta-1")]).toEqual([1, 1]);
    expect(mostOpen("gamma-1")).toBeGreaterThan(1);

    const patched = await admin.plans.update("tier", { maxInFlight: 2 });
    expect([patched.maxInFlight, patched.tenants]).toEqual([2, 3]);
    expect((await admin.tenants.get("alpha")).effective.maxInFlight).toBe(2);
    expect((await admin.tenants.get("gamma")).effective.maxInFlight).toBe(3);
    const later = new Date(Date.now() + 1500);
    for (const id of ["alpha", "beta"]) await slowJobs(id, `${id}-2`, 4, later);
    await rx.waitFor(() => ["alpha", "beta"].every((id) => arrivals(`${id}-2`).length === 4), 60_000);
    expect([mostOpen("alpha-2"), mostOpen("beta-2")]).toEqual([2, 2]);

    const refused = await admin.plans.delete("tier").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FairwayError);
    expect([(refused as FairwayError).status, (refused as FairwayError).code]).toEqual([409, "plan_in_use"]);
  }, 180_000);

  it("a PATCH of a plan's weight gives each tenant on it that share of a busy pool", async () => {
    await admin.plans.create({ id: "heavy", weight: 1 });
    for (const id of ["w1", "w2"]) await tenant(id, { plan: "heavy" });
    await tenant("w3", {});
    // Weight 3 for both tenants on the plan: they start 3 to w3's 1.
    expect((await admin.plans.update("heavy", { weight: 3 })).tenants).toBe(2);
    const at = new Date(Date.now() + 4000);
    for (const id of ["w1", "w2", "w3"]) {
      const r = await clients.get(id)!.jobs.createMany(
        Array.from({ length: 20 }, (_, i) => ({
          name: `w-${i}`,
          type: "weighted",
          schedule: { at },
          // A fixed duration, so each tenant's cost per run (the share is of worker time) is alike.
          target: { url: `${rx.url}/slow/200/weighted/${id}` },
        })),
      );
      expect(r.results.every((x) => x.status === 201)).toBe(true);
    }
    const starts = () => rx.deliveries.filter((d) => d.path.startsWith("/slow/200/weighted/"));
    await rx.waitFor(() => starts().length >= 28, 90_000);
    // One at a time (concurrency 1): the arrival order is the start order. Of the first 28, a weight of
    // 3:3:1 gives 12, 12 and 4 (each within two of it, docs/fairness.md); equal weights would give
    // 9 or 10 each, and a plan change that reached one tenant only 16.8, 5.6 and 5.6.
    const first = starts()
      .slice(0, 28)
      .map((d) => d.path.split("/").pop()!);
    const count = (id: string) => first.filter((x) => x === id).length;
    expect(count("w3"), first.join(" ")).toBeLessThanOrEqual(6);
    expect(Math.min(count("w1"), count("w2")), first.join(" ")).toBeGreaterThanOrEqual(9);
  }, 180_000);
});
