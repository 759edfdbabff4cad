// pooler — the `throughput` workload (N no-op triggers due now across 100 tenants, Fairway's real
// Executor end to end) on the machine's Postgres directly and through PgBouncer in transaction mode
// (PgBouncer's defaults, no named prepared statements), back to back: what a transaction pooler costs.
// Skipped where Debian's pgbouncer is not installed (.ci/run installs it).
import { havePgBouncer } from "../../../test/production/support/processes.ts";
import { pooledDb } from "../lib/pooler.ts";
import { inTurn, type BenchContext, type Figures, type Scenario } from "../lib/scenario.ts";
import { fairway } from "./throughput.ts";

export const pooler: Scenario = {
  name: "pooler",
  title: "no-op triggers/s end to end, Fairway directly vs through PgBouncer (transaction mode)",
  headline: { label: "pooler", keys: ["direct_per_s", "pooled_per_s", "ratio_pooled_vs_direct"] },
  async run(ctx: BenchContext) {
    if (!havePgBouncer) {
      ctx.log("pgbouncer is not installed (apt-get install -y pgbouncer): skipped");
      return {} as Figures;
    }
    const n = ctx.quick ? 5_000 : 50_000;
    const { direct_per_s, pooled_per_s } = await inTurn(
      ctx,
      ["direct_per_s", "fairway (direct)", () => fairway(n)],
      ["pooled_per_s", "fairway (PgBouncer, transaction mode)", () => fairway(n, pooledDb)],
    );
    return { direct_per_s, pooled_per_s, ratio_pooled_vs_direct: pooled_per_s / direct_per_s };
  },
};
