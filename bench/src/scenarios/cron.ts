// 5. cron-burst — N cron jobs all due in the same second (second S of every minute, UTC). One
// executor with default materializer settings (10 s lookahead, 500 jobs per pass) and a 200-slot pool
// of no-op handlers. Fire lag = handler start − scheduledFor, over every fire of that second.
import { newId, spreadOffsetMs } from "@fairway/core";
import { sql } from "@fairway/store";
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { benchDb } from "../lib/db.ts";
import type { BenchContext, Scenario } from "../lib/scenario.ts";
import { seedTenants, setPool, sleep, waitUntil } from "../lib/seed.ts";
import { percentile } from "../lib/stats.ts";

const TENANTS = 100;

export const cron: Scenario = {
  name: "cron-burst",
  title: "fire lag when N cron jobs are due in the same second",
  headline: { label: "cron", keys: ["lag_p50_ms", "lag_p99_ms", "lag_max_ms", "bound_ms"] },
  async run(ctx: BenchContext) {
    const n = ctx.quick ? 1_000 : 10_000;
    const tdb = await benchDb(10);
    const transport = createUndiciTransport({ allowPrivate: true });
    const lags: number[] = [];
    const executor = new Executor({
      db: tdb.store.db,
      transport,
      pollMs: 50,
      handlers: { work: (c) => void lags.push(Date.now() - c.scheduledFor.getTime()) },
    });
    try {
      const db = tdb.store.db;
      const tenants = await seedTenants(db, { prefix: "cr", count: TENANTS, maxInFlight: 10_000 }, "work");
      await setPool(db, "work", 200);
      // Seed parked far in the future, start the executor, and only then pick the fire second: seeding
      // and VACUUM can take seconds on a busy machine, and a fire second chosen before them could pass
      // before the executor started (that wait would be measured as fire lag).
      await db.execute(sql`
        INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at, misfire)
        SELECT 'cjob_' || g, (${JSON.stringify(tenants)}::jsonb ->> (g % ${TENANTS}::int)), 'burst', 'work',
               '0 0 1 1 *', 'UTC', 3, 1000, 60000, '2100-01-01T00:00:00Z'::timestamptz, 'skip'
          FROM generate_series(1, ${n}::int) AS g`);
      await db.execute(sql`VACUUM ANALYZE`);
      executor.start();
      const fireAt = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
      await db.execute(
        sql`UPDATE jobs SET cron = ${`${fireAt.getUTCSeconds()} * * * * *`}, next_fire_at = ${fireAt.toISOString()}::timestamptz WHERE id LIKE 'cjob_%'`,
      );
      const headroomMs = fireAt.getTime() - Date.now();
      await waitUntil(() => lags.length >= n, 120_000, `${n} cron fires`, 20);
      await sleep(50);
      const drainS = (percentile(lags, 100) - percentile(lags, 0)) / 1000;
      const throughput = ctx.shared.get("fairway_per_s");
      return {
        fires: lags.length,
        lag_p50_ms: percentile(lags, 50),
        lag_p99_ms: percentile(lags, 99),
        lag_max_ms: percentile(lags, 100),
        // Target: p99 ≤ N ÷ throughput + 1 s (throughput from this invocation's throughput scenario).
        bound_ms: throughput ? (n / throughput) * 1000 + 1000 : Number.NaN,
        drain_s: drainS,
        // How long before the fire second the jobs were in place (must be > 0 for a fair measurement).
        headroom_ms: headroomMs,
      };
    } finally {
      await executor.stop(5_000);
      await transport.close();
      await tdb.drop();
    }
  },
};

// 5b. cron-spread — the same N jobs "at midnight" (one instant an hour here, so the bench need not wait
// for midnight), with `spread: PT10M`: each fires at its instant + its id's offset. Fires per second
// are counted by handler start; the target is the busiest second within 2× the even rate N ÷ 600.
// Quick: 200 jobs over ten seconds.
export const cronSpread: Scenario = {
  name: "cron-spread",
  title: "fires per second when N cron jobs due at one instant are spread over a window",
  headline: { label: "cron-spread", keys: ["max_per_s", "even_per_s", "max_vs_even", "lag_p99_ms"] },
  async run(ctx: BenchContext) {
    const n = ctx.quick ? 200 : 10_000;
    const windowMs = ctx.quick ? 10_000 : 600_000;
    const tdb = await benchDb(10);
    const transport = createUndiciTransport({ allowPrivate: true });
    const starts: number[] = [];
    const lags: number[] = [];
    const executor = new Executor({
      db: tdb.store.db,
      transport,
      pollMs: 50,
      handlers: {
        work: (c) => {
          const now = Date.now();
          starts.push(now);
          lags.push(now - c.scheduledFor.getTime());
        },
      },
    });
    try {
      const db = tdb.store.db;
      const tenants = await seedTenants(db, { prefix: "cs", count: TENANTS, maxInFlight: 10_000 }, "work");
      await setPool(db, "work", 200);
      // Job ids as the API makes them (ULIDs), so the offsets are those real jobs get.
      const ids = Array.from({ length: n }, () => newId("job"));
      await db.execute(sql`
        INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, spread_ms, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at, misfire)
        SELECT x.id, (${JSON.stringify(tenants)}::jsonb ->> (x.ord::int % ${TENANTS}::int)), 'spread', 'work',
               '0 0 1 1 *', 'UTC', ${windowMs}::int, 3, 1000, 60000, '2100-01-01T00:00:00Z'::timestamptz, 'skip'
          FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) WITH ORDINALITY AS x(id, ord)`);
      await db.execute(sql`VACUUM ANALYZE`);
      executor.start();
      // The "midnight": a whole second at least 3 s away, hourly from then on (the period exceeds the
      // window); each job's first fire is that instant + its offset, as the API computes it.
      const fireAt = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
      const next = ids.map((id) => ({
        id,
        at: new Date(fireAt.getTime() + spreadOffsetMs(id, windowMs)).toISOString(),
      }));
      await db.execute(sql`
        UPDATE jobs j SET cron = ${`${fireAt.getUTCSeconds()} ${fireAt.getUTCMinutes()} * * * *`}, next_fire_at = x.at
          FROM jsonb_to_recordset(${JSON.stringify(next)}::jsonb) AS x(id text, at timestamptz)
         WHERE j.id = x.id`);
      const headroomMs = fireAt.getTime() - Date.now();
      await waitUntil(() => starts.length >= n, windowMs + 120_000, `${n} spread fires`, 200);
      await sleep(50);
      const perSecond = new Map<number, number>();
      for (const t of starts) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
      const maxPerS = Math.max(...perSecond.values());
      const evenPerS = n / (windowMs / 1000);
      return {
        fires: starts.length,
        max_per_s: maxPerS,
        even_per_s: evenPerS,
        // Target ≤ 2.
        max_vs_even: maxPerS / evenPerS,
        lag_p99_ms: percentile(lags, 99),
        span_s: (Math.max(...starts) - Math.min(...starts)) / 1000,
        headroom_ms: headroomMs,
      };
    } finally {
      await executor.stop(5_000);
      await transport.close();
      await tdb.drop();
    }
  },
};
