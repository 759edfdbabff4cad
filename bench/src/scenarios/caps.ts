// 4. caps — 4 executor processes against one database, 50 tenants capped at 5 in flight, more pool
// slots (4 × 50) than the caps allow (50 × 5 = 250 is the binding limit only per tenant). Every
// handler run reports its interval; an over-cap event is a moment when a tenant had more than 5 runs
// open at once, across all processes.
import type { ChildProcess } from "node:child_process";
import { benchDb } from "../lib/db.ts";
import { nextMessage, spawnWorker, stopChild } from "../lib/children.ts";
import type { BenchContext, Scenario } from "../lib/scenario.ts";
import { seedTenants, seedTriggers, setPool, waitUntil } from "../lib/seed.ts";
import { maxConcurrent } from "../lib/stats.ts";
import type { ChildConfig, ChildMessage } from "../workers/executor-child.ts";

const PROCESSES = 4;
const TENANTS = 50;
const CAP = 5;

export const caps: Scenario = {
  name: "caps",
  title: `in-flight caps across ${PROCESSES} executor processes (${TENANTS} tenants, cap ${CAP})`,
  headline: { label: "caps", keys: ["over_cap_events", "max_seen", "runs"] },
  async run(ctx: BenchContext) {
    const perTenant = ctx.quick ? 20 : 100;
    const tdb = await benchDb(2);
    const children: ChildProcess[] = [];
    try {
      const tenants = await seedTenants(tdb.store.db, { prefix: "c", count: TENANTS, maxInFlight: CAP }, "work");
      await setPool(tdb.store.db, "work", 50);
      await seedTriggers(tdb.store.db, tenants, perTenant, "work");
      const runs = new Map<string, Array<{ start: number; end: number }>>();
      let total = 0;
      const cfg: ChildConfig = { url: tdb.url, minMs: 5, maxMs: 25, report: true };
      const t0 = performance.now();
      for (let i = 0; i < PROCESSES; i++) {
        const child = spawnWorker("executor-child.ts", { FAIRWAY_BENCH: JSON.stringify(cfg) });
        child.on("message", (m: ChildMessage) => {
          if (m.kind !== "runs") return;
          for (const [tenant, start, end] of m.runs) {
            const list = runs.get(tenant) ?? [];
            list.push({ start, end });
            runs.set(tenant, list);
          }
          total += m.runs.length;
        });
        children.push(child);
      }
      await waitUntil(() => total >= TENANTS * perTenant, 120_000, "all capped runs", 20);
      const seconds = (performance.now() - t0) / 1000;
      const stopped = await Promise.all(
        children.map(async (c) => {
          const msg = nextMessage<ChildMessage>(c, (m) => m.kind === "stopped");
          await stopChild(c);
          return msg;
        }),
      );
      const perProcess = stopped.map((m) => (m.kind === "stopped" ? m.settled : 0));
      let overCap = 0;
      let maxSeen = 0;
      for (const list of runs.values()) {
        const m = maxConcurrent(list);
        maxSeen = Math.max(maxSeen, m);
        if (m > CAP) overCap++;
      }
      ctx.log(`settled per process: ${perProcess.join(", ")}`);
      return {
        over_cap_events: overCap,
        max_seen: maxSeen,
        runs: total,
        runs_per_s: total / seconds,
        processes_used: perProcess.filter((n) => n > 0).length,
      };
    } finally {
      await Promise.all(children.map((c) => stopChild(c).catch(() => c.kill("SIGKILL"))));
      await tdb.drop();
    }
  },
};
