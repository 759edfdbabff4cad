// 7. webhooks — real signed HTTP deliveries (Standard Webhooks HMAC) from Fairway's executor to a
// local target at pool concurrency 50, against three references in the same run (peers/delivery.ts):
// the delivery limit (a bare keep-alive undici.request loop, 50 in flight, same target, same body
// size), the same loop signing each request as Fairway does, and raw durable delivery (the raw SKIP
// LOCKED queue feeding the signed loop). All are timed in steady state, after a warm-up of their own
// (a quarter of n): timed from cold, the limit would come out low (the target's and undici's code
// still being compiled), which would flatter the ratio.
import { sql } from "@fairway/store";
import { benchDb } from "../lib/db.ts";
import { nextMessage, spawnWorker, stopChild } from "../lib/children.ts";
import { runExecutorUntil } from "../lib/fairway.ts";
import { inTurn, type BenchContext, type Scenario, type TimedWindow } from "../lib/scenario.ts";
import { seedTenants, seedTriggers, setPool } from "../lib/seed.ts";
import { deliveryLimit, IN_FLIGHT, postBare, postSigned, rawDelivery } from "../peers/delivery.ts";

const TENANTS = 50;

/** Fairway's deliveries/s: its executor, as the server runs it, over 50 tenants. */
export async function fairway(url: string, n: number, warm: number, window?: TimedWindow): Promise<number> {
  const tdb = await benchDb(10);
  try {
    const db = tdb.store.db;
    const tenants = await seedTenants(db, { prefix: "wh", count: TENANTS, maxInFlight: 1000 }, "webhook");
    await db.execute(
      sql`UPDATE jobs SET target = ${JSON.stringify({ url })}::jsonb, payload = '{"hello":"world"}'::jsonb`,
    );
    await setPool(db, "webhook", IN_FLIGHT);
    await seedTriggers(db, tenants, (n + warm) / TENANTS, "webhook");
    await db.execute(sql`VACUUM ANALYZE`);
    const { ms, timed } = await runExecutorUntil({ db, settled: n + warm, warm, window, timeoutMs: 300_000 });
    return (timed / ms) * 1000;
  } finally {
    await tdb.drop();
  }
}

/** Raw durable delivery's deliveries/s, in a database of its own. */
export async function raw(url: string, n: number, warm: number, window?: TimedWindow): Promise<number> {
  const tdb = await benchDb(1);
  try {
    return await rawDelivery(tdb.url, url, n, warm, window);
  } finally {
    await tdb.drop();
  }
}

export const webhooks: Scenario = {
  name: "webhooks",
  title:
    "signed webhook deliveries/s at concurrency 50 vs a bare keep-alive undici loop, signed or not, and raw durable delivery",
  headline: { label: "webhooks", keys: ["per_s", "ratio_vs_limit", "ratio_vs_raw_delivery", "limit_per_s"] },
  async run(ctx: BenchContext) {
    const n = ctx.quick ? 2_000 : 20_000;
    const warm = n / 4;
    const target = spawnWorker("target.ts");
    try {
      const { port } = await nextMessage<{ kind: string; port: number }>(target, (m) => m.kind === "listening");
      const url = `http://127.0.0.1:${port}/hook`;
      // The same shape of body Fairway sends (ids, job name, timestamps, payload).
      const body = JSON.stringify({
        id: "trg_" + "x".repeat(26),
        jobId: "job_" + "x".repeat(26),
        jobName: "bench",
        scheduledFor: new Date(),
        attempt: 1,
        payload: { hello: "world" },
      });
      const f = await inTurn(
        ctx,
        ["limit_per_s", "delivery limit", () => deliveryLimit(url, n, warm, postBare(body))],
        ["per_s", "fairway", () => fairway(url, n, warm)],
        ["signed_limit_per_s", "signed limit", () => deliveryLimit(url, n, warm, postSigned)],
        ["raw_delivery_per_s", "raw durable delivery", () => raw(url, n, warm)],
      );
      return {
        per_s: f.per_s,
        limit_per_s: f.limit_per_s,
        signed_limit_per_s: f.signed_limit_per_s,
        raw_delivery_per_s: f.raw_delivery_per_s,
        ratio_vs_limit: f.per_s / f.limit_per_s,
        ratio_vs_signed_limit: f.per_s / f.signed_limit_per_s,
        ratio_vs_raw_delivery: f.per_s / f.raw_delivery_per_s,
        raw_delivery_vs_limit: f.raw_delivery_per_s / f.limit_per_s,
      };
    } finally {
      await stopChild(target);
    }
  },
};
