// Design study: what the executor and Postgres spend per delivery when
// the target takes DELAY_MS to answer. Not part of `npm run bench`; run it by hand:
//
//   DELAY_MS=3|10|30 [N=20000] [TENANTS=50] [LINGER=40] npx tsx bench/src/studies/slow-targets.ts
//
// The webhooks shape (50 tenants, a pool of 50, webhook jobs with targets), but the transport is a
// timer that answers 200 after DELAY_MS: no HTTP and no target process, so the CPU measured is the
// executor's own (signing and the timer included) and Postgres's. LINGER is the settle linger in ms
// (default the executor's). Postgres CPU is that of every `postgres` process on the machine, from
// /proc: run it on an otherwise quiet machine.
import { Executor, type Transport } from "@fairway/executor";
import { query, sql } from "@fairway/store";
import { benchDb } from "../lib/db.ts";
import { postgresCpuUs } from "../lib/proc.ts";
import { seedTenants, seedTriggers, setPool, sleep, waitUntil } from "../lib/seed.ts";

const DELAY_MS = Number(process.env.DELAY_MS ?? 10);
const N = Number(process.env.N ?? 20_000);
const TENANTS = Number(process.env.TENANTS ?? 50);
const WARM = N / 4;

const tdb = await benchDb(10);
try {
  const db = tdb.store.db;
  const tenants = await seedTenants(db, { prefix: "st", count: TENANTS, maxInFlight: 1000 }, "webhook");
  await db.execute(
    sql`UPDATE jobs SET target = ${JSON.stringify({ url: "http://127.0.0.1:9/hook" })}::jsonb, payload = '{"hello":"world"}'::jsonb`,
  );
  await setPool(db, "webhook", 50);
  await seedTriggers(db, tenants, (N + WARM) / TENANTS, "webhook");
  await db.execute(sql`VACUUM ANALYZE`);
  const ok = { status: 200, header: () => null, headers: () => ({}), body: "", truncated: false };
  const transport: Transport = () => new Promise((resolve) => setTimeout(() => resolve(ok), DELAY_MS));
  const executor = new Executor({
    db,
    transport,
    allowPrivateTargets: true,
    pollMs: 50,
    settleLingerMs: process.env.LINGER ? Number(process.env.LINGER) : undefined,
  }).start();
  await waitUntil(() => executor.stats.settled >= WARM, 300_000, "warm-up", 5);
  const cpu0 = process.cpuUsage(),
    pg0 = postgresCpuUs(),
    t0 = performance.now(),
    from = executor.stats.settled;
  await waitUntil(() => executor.stats.settled >= N + WARM, 300_000, "the timed deliveries", 5);
  const cpu = process.cpuUsage(cpu0),
    pg = postgresCpuUs() - pg0,
    ms = performance.now() - t0;
  const timed = executor.stats.settled - from;
  await executor.stop(5_000);
  await sleep(1_100); // table statistics reach pg_stat_user_tables at most once a second
  const [{ claims }] = await query<{ claims: number }>(
    db,
    sql`SELECT n_tup_ins::int AS claims FROM pg_stat_user_tables WHERE relname = 'leases'`,
  );
  console.log(
    JSON.stringify({
      delay_ms: DELAY_MS,
      per_s: Math.round((timed / ms) * 1000),
      executor_us: +((cpu.user + cpu.system) / timed).toFixed(1),
      postgres_us: +(pg / timed).toFixed(1),
      rows_per_claim: Math.round(executor.stats.claimed / claims),
    }),
  );
} finally {
  await tdb.drop();
}
