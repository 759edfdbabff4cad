// 6. scale — 1M jobs over 10k tenants, 1% of tenants active (due triggers): the time of one fair
// claim (budget 100) on tables that size, the materializer's fires/s when 10k of those cron jobs come
// due at once, and the resident memory of an executor process that drains the due work. With fairness
// keys: one more tenant with 100k keys each with a due trigger, and 900k more keys idle over the
// tenants (1M keys in all): the claim tick again, with that tenant among the candidates.
import { claim, materialize, settle, sql, type Db } from "@fairway/store";
import { benchDb } from "../lib/db.ts";
import { nextMessage, spawnWorker, stopChild } from "../lib/children.ts";
import type { BenchContext, Scenario } from "../lib/scenario.ts";
import { countStatus, setPool, waitUntil } from "../lib/seed.ts";
import { percentile } from "../lib/stats.ts";
import type { ChildConfig, ChildMessage } from "../workers/executor-child.ts";

interface Size {
  jobs: number;
  tenants: number;
  perActive: number;
  due: number;
  ticks: number;
  /** Keys with due work in the keyed tenant, and keys in all. */
  dueKeys: number;
  allKeys: number;
}

/** A tenant whose `dueKeys` keys each have one due trigger (their tenant_keys rows made by the queue's
 *  triggers, as in production), and idle keys (no queued work: rows as a key leaves them) over the
 *  other tenants up to `allKeys`. */
async function seedKeys(db: Db, s: Size): Promise<void> {
  await db.execute(sql`
    INSERT INTO tenants (id, name, max_in_flight, signing_secret, max_jobs)
    VALUES ('skeyed', 'scale', 100000, 'whsec_c2NhbGU=', 1000000)`);
  await db.execute(sql`
    INSERT INTO jobs (id, tenant_id, name, type, max_attempts, initial_delay_ms, max_delay_ms)
    VALUES ('skjob', 'skeyed', 'scale', 'work', 3, 1000, 60000)`);
  for (let i = 0; i < s.dueKeys; i += 50_000) {
    await db.execute(sql`
      INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts, key)
      SELECT 'sk' || g, 'skeyed', 'skjob', 'work', 'manual', now(), now(), 3, 'key' || g
        FROM generate_series(${i}::int, ${Math.min(s.dueKeys, i + 50_000) - 1}::int) g`);
  }
  await db.execute(sql`
    INSERT INTO tenant_keys (tenant_id, key, vtime)
    SELECT 's' || lpad((g % ${s.tenants}::int)::text, 5, '0'), 'idle' || g, 0
      FROM generate_series(1, ${Math.max(0, s.allKeys - s.dueKeys)}::int) g`);
  await db.execute(sql`VACUUM ANALYZE`);
}

async function seed(db: Db, s: Size): Promise<void> {
  await db.execute(sql`
    INSERT INTO tenants (id, name, max_in_flight, signing_secret, max_jobs)
    SELECT 's' || lpad(g::text, 5, '0'), 'scale', 100, 'whsec_c2NhbGU=', 1000000 FROM generate_series(0, ${s.tenants - 1}::int) g`);
  // Cron jobs, hourly, next fire an hour away: the materializer's index holds them all, none is due.
  for (let i = 0; i < s.jobs; i += 250_000) {
    await db.execute(sql`
      INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at)
      SELECT 'sj' || g, 's' || lpad((g % ${s.tenants}::int)::text, 5, '0'), 'scale', 'work', '0 * * * *', 'UTC', 3, 1000, 60000,
             now() + interval '1 hour'
        FROM generate_series(${i}::int, ${Math.min(s.jobs, i + 250_000) - 1}::int) g`);
  }
  // 1% of tenants active: each has due one-time work on one of its jobs.
  const active = Math.max(1, Math.round(s.tenants / 100));
  await db.execute(sql`
    INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts)
    SELECT 'st' || a || '_' || k, 's' || lpad(a::text, 5, '0'), 'sj' || a, 'work', 'manual', now(), now(), 3
      FROM generate_series(0, ${active - 1}::int) a, generate_series(1, ${s.perActive}::int) k`);
  await db.execute(sql`VACUUM ANALYZE`);
}

/** Claim budget 100 `ticks` times, settling each batch at once (as a fast pool would). */
async function claimTicks(db: Db, ticks: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ticks; i++) {
    const t0 = performance.now();
    const got = await claim(db, { type: "work", budget: 100, owner: "bench", leaseMs: 60_000 });
    times.push(performance.now() - t0);
    const now = new Date();
    await settle(
      db,
      got.map((t) => ({
        id: t.id,
        leaseToken: t.leaseToken,
        attempt: t.attempt,
        status: "succeeded" as const,
        startedAt: now,
        durationMs: 1,
        outcome: "success",
      })),
    );
  }
  return times;
}

export const scale: Scenario = {
  name: "scale",
  title: "claim tick, materializer and executor memory with 1M jobs / 10k tenants (1% active)",
  headline: {
    label: "scale",
    keys: ["tick_ms_p99", "tick_ms_p50", "keyed_tick_ms_p99", "keyed_tick_ms_p50", "materialize_per_s", "rss_mb"],
  },
  async run(ctx: BenchContext) {
    const s: Size = ctx.quick
      ? { jobs: 20_000, tenants: 200, perActive: 200, due: 1_000, ticks: 20, dueKeys: 1_000, allKeys: 10_000 }
      : {
          jobs: 1_000_000,
          tenants: 10_000,
          perActive: 200,
          due: 10_000,
          ticks: 100,
          dueKeys: 100_000,
          allKeys: 1_000_000,
        };
    const tdb = await benchDb(4);
    try {
      const db = tdb.store.db;
      await setPool(db, "work", 200);
      const t0 = performance.now();
      await seed(db, s);
      ctx.log(`seeded ${s.jobs} jobs / ${s.tenants} tenants in ${Math.round((performance.now() - t0) / 1000)} s`);

      const ticks = await claimTicks(db, s.ticks);

      const k0 = performance.now();
      await seedKeys(db, s);
      ctx.log(
        `seeded ${s.dueKeys} due keys, ${s.allKeys} keys in all, in ${Math.round((performance.now() - k0) / 1000)} s`,
      );
      const keyedTicks = await claimTicks(db, s.ticks);

      await db.execute(
        sql`UPDATE jobs SET next_fire_at = now() WHERE id IN (SELECT id FROM jobs ORDER BY id LIMIT ${s.due})`,
      );
      const m0 = performance.now();
      let fired = 0;
      for (;;) {
        const r = await materialize(db, new Date(), 1000);
        fired += r.fired;
        if (r.jobs === 0) break;
      }
      const materializePerS = (fired / (performance.now() - m0)) * 1000;

      // An executor process drains what is due; its RSS is what one executor costs at this scale.
      const cfg: ChildConfig = { url: tdb.url, minMs: 1, maxMs: 3, report: false };
      const child = spawnWorker("executor-child.ts", { FAIRWAY_BENCH: JSON.stringify(cfg) });
      try {
        // Drained: nothing pending and nothing running. (Pending alone reached 0 while claimed triggers
        // still ran or waited in the prefetch queue; stopping then released those back to pending, and
        // executor_settled read short of what was due.)
        const drained = async () =>
          (await countStatus(db, "pending")) === 0 && (await countStatus(db, "running")) === 0;
        await waitUntil(drained, 300_000, "scale drain", 500);
        const stopped = nextMessage<ChildMessage>(child, (m) => m.kind === "stopped");
        await stopChild(child);
        const msg = await stopped;
        return {
          tick_ms_p50: percentile(ticks, 50),
          tick_ms_p99: percentile(ticks, 99),
          keyed_tick_ms_p50: percentile(keyedTicks, 50),
          keyed_tick_ms_p99: percentile(keyedTicks, 99),
          materialize_per_s: materializePerS,
          rss_mb: msg.kind === "stopped" ? msg.rssMb : Number.NaN,
          executor_settled: msg.kind === "stopped" ? msg.settled : 0,
        };
      } finally {
        await stopChild(child).catch(() => child.kill("SIGKILL"));
      }
    } finally {
      await tdb.drop();
    }
  },
};
