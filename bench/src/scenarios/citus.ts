// citus — the `throughput` workload (N no-op triggers due now across 100 tenants, Fairway's real
// Executor end to end) on the machine's Postgres and on a Citus coordinator the scenario starts on
// loopback (PostgreSQL 15 with the extension loaded, Fairway's tables local to the coordinator, as
// `npm start` runs there today: docs/scaling.md), back to back: what the Citus planner hook costs
// when nothing is distributed. Needs Citus installed (.ci/run installs it).
import { connectPostgres } from "@fairway/store";
import { migrate } from "../../../packages/store/src/node.ts";
import { startCitusCluster } from "../../../test/citus/support/cluster.ts";
import type { TestDb } from "../../../test/support/pg.ts";
import { inTurn, type BenchContext, type Scenario } from "../lib/scenario.ts";
import { fairway } from "./throughput.ts";

export const citus: Scenario = {
  name: "citus",
  title: "no-op triggers/s end to end, one PostgreSQL vs a Citus coordinator (tables on the coordinator)",
  headline: { label: "citus", keys: ["postgres_per_s", "coordinator_per_s", "ratio_coordinator_vs_postgres"] },
  async run(ctx: BenchContext) {
    const n = ctx.quick ? 5_000 : 50_000;
    const cluster = await startCitusCluster(0, { durable: true });
    let made = 0;
    const onCoordinator = async (max: number): Promise<TestDb> => {
      const name = `bench_${ctx.run}_${made++}`;
      const url = await cluster.createDatabase(name);
      const store = connectPostgres(url, { max });
      await migrate(store, { log: () => {} });
      return { name, url, store, drop: () => store.close() };
    };
    try {
      const { postgres_per_s, coordinator_per_s } = await inTurn(
        ctx,
        ["postgres_per_s", "fairway (one PostgreSQL)", () => fairway(n)],
        ["coordinator_per_s", "fairway (Citus coordinator, local tables)", () => fairway(n, onCoordinator)],
      );
      return { postgres_per_s, coordinator_per_s, ratio_coordinator_vs_postgres: coordinator_per_s / postgres_per_s };
    } finally {
      await cluster.stop();
    }
  },
};
