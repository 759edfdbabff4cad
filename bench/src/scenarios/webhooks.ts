// 7. webhooks — real signed HTTP deliveries (Standard Webhooks HMAC) from Fairway's executor to a
// local target at pool concurrency 50, against the delivery limit: a bare keep-alive undici.request
// loop with 50 in flight, same target, same body size, same run. Both are timed in steady state, after
// a warm-up of their own (a quarter of n): timed from cold, the limit came out ~20-25 % low (the
// target's and undici's code still being compiled), which flattered the ratio.
import { Agent, request } from "undici";
import { sql } from "@fairway/store";
import { benchDb } from "../lib/db.ts";
import { nextMessage, spawnWorker, stopChild } from "../lib/children.ts";
import { runExecutorUntil } from "../lib/fairway.ts";
import { inTurn, type BenchContext, type Scenario } from "../lib/scenario.ts";
import { seedTenants, seedTriggers, setPool } from "../lib/seed.ts";

const IN_FLIGHT = 50;
const TENANTS = 50;

async function limit(url: string, n: number, warm: number, body: string): Promise<number> {
  const agent = new Agent({ connections: 128, keepAliveTimeout: 30_000 });
  const loop = async (count: number) => {
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < count) {
        const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher: agent });
        await res.body.text();
      }
    }));
  };
  await loop(warm);
  const t0 = performance.now();
  await loop(n);
  const perS = (n / (performance.now() - t0)) * 1000;
  await agent.close();
  return perS;
}

async function fairway(url: string, n: number, warm: number): Promise<number> {
  const tdb = await benchDb(10);
  try {
    const db = tdb.store.db;
    const tenants = await seedTenants(db, { prefix: "wh", count: TENANTS, maxInFlight: 1000 }, "webhook");
    await db.execute(sql`UPDATE jobs SET target = ${JSON.stringify({ url })}::jsonb, payload = '{"hello":"world"}'::jsonb`);
    await setPool(db, "webhook", IN_FLIGHT);
    await seedTriggers(db, tenants, (n + warm) / TENANTS, "webhook");
    await db.execute(sql`VACUUM ANALYZE`);
    const { ms, timed } = await runExecutorUntil({ db, settled: n + warm, warm, timeoutMs: 300_000 });
    return (timed / ms) * 1000;
  } finally {
    await tdb.drop();
  }
}

export const webhooks: Scenario = {
  name: "webhooks",
  title: "signed webhook deliveries/s at concurrency 50 vs a bare keep-alive undici loop",
  headline: { label: "webhooks", keys: ["per_s", "ratio_vs_limit", "limit_per_s"] },
  async run(ctx: BenchContext) {
    const n = ctx.quick ? 2_000 : 20_000;
    const warm = n / 4;
    const target = spawnWorker("target.ts");
    try {
      const { port } = await nextMessage<{ kind: string; port: number }>(target, (m) => m.kind === "listening");
      const url = `http://127.0.0.1:${port}/hook`;
      // The same shape of body Fairway sends (ids, job name, timestamps, payload).
      const body = JSON.stringify({ id: "trg_" + "x".repeat(26), jobId: "job_" + "x".repeat(26), jobName: "bench", scheduledFor: new Date(), attempt: 1, payload: { hello: "world" } });
      let limit_per_s = 0;
      let per_s = 0;
      await inTurn(
        ctx,
        async () => {
          limit_per_s = await limit(url, n, warm, body);
          ctx.log(`delivery limit ${Math.round(limit_per_s)}/s`);
        },
        async () => {
          per_s = await fairway(url, n, warm);
          ctx.log(`fairway ${Math.round(per_s)}/s`);
        },
      );
      return { per_s, limit_per_s, ratio_vs_limit: per_s / limit_per_s };
    } finally {
      await stopChild(target);
    }
  },
};
