// citus — the `throughput` workload (N no-op triggers due now across 100 tenants, Fairway's real
// Executor end to end) and the `api` one (POST /v1/jobs over HTTP), each on two PostgreSQL 15 servers
// the scenario starts alike on loopback (fsync on, 128 MB shared buffers): one plain; a Citus
// coordinator with Fairway's tables local to it (what the extension costs when nothing is
// distributed); and a coordinator with two workers and the distributed layout (FAIRWAY_DISTRIBUTE:
// every hot statement per tenant, on its shard's node; docs/scaling.md). In turn, so the arms share
// the machine alike. On one machine the cluster's nodes share its cores: the ratio is the layout's
// overhead per item, not what more machines would add. Needs Citus (.ci/run installs it).
import { connectPostgres } from "@fairway/store";
import { migrate } from "../../../packages/store/src/node.ts";
import { startCitusCluster, startPlainServer } from "../../../test/citus/support/cluster.ts";
import type { TestDb } from "../../../test/support/pg.ts";
import { inTurn, type BenchContext, type Scenario, type TimedWindow } from "../lib/scenario.ts";
import { serverCpuSeconds } from "../lib/server-cpu.ts";
import { measure } from "./api.ts";
import { fairway } from "./throughput.ts";

type Server = Pick<Awaited<ReturnType<typeof startPlainServer>>, "createDatabase">;

/** CPU seconds each server (by name) used in the timed window of a run, and the items it ran. */
interface CpuWindow extends TimedWindow {
  seconds: Record<string, number>;
}

function cpuWindow(servers: Record<string, string>): CpuWindow {
  const before: Record<string, number> = {};
  const w: CpuWindow = {
    seconds: {},
    start() {
      for (const [name, dir] of Object.entries(servers)) before[name] = serverCpuSeconds(dir);
    },
    end() {
      for (const [name, dir] of Object.entries(servers)) w.seconds[name] = serverCpuSeconds(dir) - before[name]!;
    },
  };
  return w;
}

/** A fresh migrated database on `server` for each arm. */
function opener(server: Server, prefix: string, distribute = false) {
  let made = 0;
  return async (max: number): Promise<TestDb> => {
    const name = `${prefix}_${made++}`;
    const url = await server.createDatabase(name);
    const store = connectPostgres(url, { max });
    await migrate(store, { log: () => {}, distribute });
    return { name, url, store, drop: () => store.close() };
  };
}

export const citus: Scenario = {
  name: "citus",
  title:
    "no-op triggers/s and POST /v1/jobs/s: PostgreSQL vs a Citus coordinator (local tables) vs a 2-worker cluster (distributed)",
  headline: {
    label: "citus",
    keys: [
      "ratio_coordinator_vs_postgres",
      "ratio_cluster_vs_postgres",
      "api_ratio_coordinator_vs_postgres",
      "api_ratio_cluster_vs_postgres",
      "postgres_per_s",
      "api_postgres_per_s",
    ],
  },
  async run(ctx: BenchContext) {
    const n = ctx.quick ? 5_000 : 50_000;
    const calls = ctx.quick ? 1_000 : 10_000;
    const plain = await startPlainServer();
    // Deadlocks are counted (a figure of the run), not fatal: the drills (test/citus) fail on them.
    const coordinatorOnly = await startCitusCluster(0, { durable: true, allowDeadlocks: true }).catch(async (err) => {
      await plain.stop();
      throw err;
    });
    const cluster = await startCitusCluster(2, { durable: true, allowDeadlocks: true }).catch(async (err) => {
      await coordinatorOnly.stop();
      await plain.stop();
      throw err;
    });
    const onPlain = opener(plain, `plain_${ctx.run}`);
    const onCoordinator = opener(coordinatorOnly, `coordinator_${ctx.run}`);
    const onCluster = opener(cluster, `cluster_${ctx.run}`, true);
    // PostgreSQL CPU per delivered trigger, per server: the capacity model (docs/scaling.md).
    const plainCpu = cpuWindow({ postgres: plain.dataDir });
    const clusterCpu = cpuWindow({
      coordinator: cluster.coordinator.dataDir,
      ...Object.fromEntries(cluster.workers.map((w, i) => [`worker${i + 1}`, w.dataDir])),
    });
    try {
      const run = await inTurn(
        ctx,
        ["postgres", "fairway (PostgreSQL)", () => fairway(n, onPlain, 0, plainCpu)],
        ["coordinator", "fairway (Citus coordinator, local tables)", () => fairway(n, onCoordinator)],
        ["cluster", "fairway (Citus, 2 workers, distributed)", () => fairway(n, onCluster, 0, clusterCpu)],
      );
      const api = await inTurn(
        ctx,
        [
          "postgres",
          "POST /v1/jobs (PostgreSQL)",
          async () => (await measure(ctx, "postgres", calls, onPlain)).create_per_s,
        ],
        [
          "coordinator",
          "POST /v1/jobs (Citus coordinator, local tables)",
          async () => (await measure(ctx, "coordinator", calls, onCoordinator)).create_per_s,
        ],
        [
          "cluster",
          "POST /v1/jobs (Citus, 2 workers, distributed)",
          async () => (await measure(ctx, "cluster", calls, onCluster)).create_per_s,
        ],
      );
      return {
        postgres_per_s: run.postgres!,
        coordinator_per_s: run.coordinator!,
        ratio_coordinator_vs_postgres: run.coordinator! / run.postgres!,
        api_postgres_per_s: api.postgres!,
        api_coordinator_per_s: api.coordinator!,
        api_ratio_coordinator_vs_postgres: api.coordinator! / api.postgres!,
        cluster_per_s: run.cluster!,
        ratio_cluster_vs_postgres: run.cluster! / run.postgres!,
        api_cluster_per_s: api.cluster!,
        api_ratio_cluster_vs_postgres: api.cluster! / api.postgres!,
        // Milliseconds of PostgreSQL CPU per delivered trigger.
        postgres_cpu_ms_per_item: (plainCpu.seconds.postgres! * 1000) / n,
        coordinator_cpu_ms_per_item: (clusterCpu.seconds.coordinator! * 1000) / n,
        cluster_deadlocks: cluster.deadlocks().length,
        workers_cpu_ms_per_item:
          (Object.entries(clusterCpu.seconds)
            .filter(([k]) => k.startsWith("worker"))
            .reduce((a, [, v]) => a + v, 0) *
            1000) /
          n,
      };
    } finally {
      await cluster.stop();
      await coordinatorOnly.stop();
      await plain.stop();
    }
  },
};
