// citus — the `throughput` workload (N no-op triggers due now across 100 tenants, Fairway's real
// Executor end to end) and the `api` one (POST /v1/jobs over HTTP), each on two PostgreSQL 15 servers
// the scenario starts alike on loopback (fsync on, 128 MB shared buffers): one plain, one a Citus
// coordinator with Fairway's tables local to it, as `npm start` runs there today (docs/scaling.md).
// Back to back: what the Citus extension costs when nothing is distributed. Both are private to the
// scenario, so neither shares its server with other work. Needs Citus (.ci/run installs it).
import { connectPostgres } from "@fairway/store";
import { migrate } from "../../../packages/store/src/node.ts";
import { startCitusCluster, startPlainServer } from "../../../test/citus/support/cluster.ts";
import type { TestDb } from "../../../test/support/pg.ts";
import { inTurn, type BenchContext, type Scenario } from "../lib/scenario.ts";
import { measure } from "./api.ts";
import { fairway } from "./throughput.ts";

type Server = Awaited<ReturnType<typeof startPlainServer>>;

/** A fresh migrated database on `server` for each arm. */
function opener(server: Server, prefix: string) {
  let made = 0;
  return async (max: number): Promise<TestDb> => {
    const name = `${prefix}_${made++}`;
    const url = await server.createDatabase(name);
    const store = connectPostgres(url, { max });
    await migrate(store, { log: () => {} });
    return { name, url, store, drop: () => store.close() };
  };
}

export const citus: Scenario = {
  name: "citus",
  title: "no-op triggers/s and POST /v1/jobs/s: PostgreSQL vs a Citus coordinator (tables on the coordinator)",
  headline: {
    label: "citus",
    keys: [
      "ratio_coordinator_vs_postgres",
      "api_ratio_coordinator_vs_postgres",
      "postgres_per_s",
      "api_postgres_per_s",
    ],
  },
  async run(ctx: BenchContext) {
    const n = ctx.quick ? 5_000 : 50_000;
    const calls = ctx.quick ? 1_000 : 10_000;
    const plain = await startPlainServer();
    const cluster = await startCitusCluster(0, { durable: true }).catch(async (err) => {
      await plain.stop();
      throw err;
    });
    const onPlain = opener(plain, `plain_${ctx.run}`);
    const onCoordinator = opener(cluster, `coordinator_${ctx.run}`);
    try {
      const run = await inTurn(
        ctx,
        ["postgres", "fairway (PostgreSQL)", () => fairway(n, onPlain)],
        ["coordinator", "fairway (Citus coordinator, local tables)", () => fairway(n, onCoordinator)],
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
      );
      return {
        postgres_per_s: run.postgres!,
        coordinator_per_s: run.coordinator!,
        ratio_coordinator_vs_postgres: run.coordinator! / run.postgres!,
        api_postgres_per_s: api.postgres!,
        api_coordinator_per_s: api.coordinator!,
        api_ratio_coordinator_vs_postgres: api.coordinator! / api.postgres!,
      };
    } finally {
      await cluster.stop();
      await plain.stop();
    }
  },
};
