// Redis flushed, then Redis gone, while jobs are created and delivered. Redis is
// coordination only (docs/architecture.md), so: lost = 0, no duplicates, and the degradation documented in
// packages/coord/src/index.ts — rate limiting fails open, the ready index is rebuilt after a flush,
// claims find tenants in Postgres while Redis is down — and everything comes back when Redis does.
// "Flushed" deletes this file's key prefix only; "gone" cuts a TCP proxy we own, never Redis itself.
import { afterAll, beforeAll, expect, it } from "vitest";
import { Redis } from "ioredis";
import { createRedisCoordinator, type Coordinator } from "@fairway/coord";
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { query, sql } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { REDIS_URL, deletePrefix, testPrefix } from "../support/redis.ts";
import { seedPool } from "../support/seed.ts";
import { appFor, call, tenantWithKey } from "./support/api.ts";
import { startHookReceiver, type Hit, type HookReceiver } from "./support/hook-receiver.ts";
import { deliveryReport, statusCounts, until } from "./support/ledger.ts";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.ts";

const prefix = testPrefix("faults");
let db: TestDb;
let receiver: HookReceiver;
let proxy: TcpProxy;
let coord: Coordinator;
let direct: Redis;

beforeAll(async () => {
  db = await createTestDb();
  receiver = await startHookReceiver();
  const u = new URL(REDIS_URL);
  proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 6379) });
  coord = createRedisCoordinator({ url: proxy.urlFor(REDIS_URL), prefix });
  direct = new Redis(REDIS_URL);
});

afterAll(async () => {
  await coord?.close();
  await proxy?.close();
  await deletePrefix(prefix);
  direct?.disconnect();
  await receiver?.close();
  await db?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("flush and outage under load: lost 0, duplicates 0, fails open, recovers", async () => {
  await seedPool(db.store.db, "webhook", 20, { leaseMs: 3000, timeoutMs: 2000 });
  const loadApp = appFor({ db: db.store.db, coordinator: coord, apiRatePerSecond: 0 });
  // A second app on the same coordinator with a low API rate, to see the limiter work, fail open, return.
  const probeApp = appFor({ db: db.store.db, coordinator: coord, apiRatePerSecond: 10 });
  const key = await tenantWithKey(loadApp, "acme", { maxInFlight: 10 });
  const probeKey = await tenantWithKey(loadApp, "probe");
  const transport = createUndiciTransport({ allowPrivate: true });
  const ex = new Executor({
    db: db.store.db,
    transport,
    readyIndex: coord,
    wake: coord,
    allowPrivateTargets: true,
    pollMs: 200,
    reapEveryMs: 500,
  }).start();

  let phase = "normal";
  const created: Array<{ phase: string; status: number }> = [];
  let loading = true;
  const load = (async () => {
    while (loading) {
      const batch = await Promise.all(
        Array.from({ length: 5 }, () =>
          call(loadApp, "POST", "/v1/jobs", key, {
            name: "hook",
            schedule: { delayMs: 0 },
            target: { url: `${receiver.url}/t/acme` },
          }),
        ),
      );
      for (const r of batch) created.push({ phase, status: r.status });
      await sleep(50);
    }
  })();
  const probe = async () => {
    const rs = await Promise.all(Array.from({ length: 30 }, () => call(probeApp, "GET", "/v1/quota", probeKey)));
    return {
      ok: rs.filter((r) => r.status === 200).length,
      limited: rs.filter((r) => r.status === 429).length,
      other: rs.filter((r) => r.status !== 200 && r.status !== 429).length,
    };
  };
  const builtKey = `${prefix}ready:webhook:built`;

  try {
    // The limiter is up once a probe is refused (waited for: connecting takes longer on a loaded machine).
    const before = await until(probe, (p) => p.limited > 0 || p.other > 0, 15_000, "rate limiter up");
    await until(
      () => direct.exists(builtKey),
      (n) => n === 1,
      10_000,
      "ready index built",
    );

    phase = "flushed";
    await deletePrefix(prefix);
    expect(await direct.exists(builtKey)).toBe(0);
    await until(
      () => direct.exists(builtKey),
      (n) => n === 1,
      15_000,
      "ready index rebuilt after flush",
    );

    phase = "down";
    proxy.cut();
    const cutAt = Date.now();
    await sleep(500);
    const during = await probe();
    await sleep(2500);

    phase = "restored";
    await proxy.restore();
    const restoredAt = Date.now();
    const after = await until(probe, (p) => p.limited > 0, 15_000, "rate limiter back");
    const limiterBackMs = Date.now() - restoredAt;
    await sleep(500);
    loading = false;
    await load;

    const accepted = created.filter((c) => c.status === 201).length;
    await until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === accepted,
      30_000,
      "every accepted job delivered",
    );
    const ids = (await query<{ id: string }>(db.store.db, sql`SELECT id FROM triggers`)).map((r) => r.id);
    const report = deliveryReport(receiver.hits, ids);
    const byPhase = (p: string) => created.filter((c) => c.phase === p);
    const lag = await lagByPhase(receiver.hits, cutAt, restoredAt);
    console.log(
      JSON.stringify({
        drill: "redis",
        ...report,
        created: created.length,
        accepted,
        probe: { before, during, after },
        limiterBackMs,
        lagMs: lag,
      }),
    );

    expect(created.filter((c) => c.status !== 201)).toEqual([]);
    expect(byPhase("down").length).toBeGreaterThan(0);
    expect(ids.length).toBe(accepted);
    expect(report.lost).toBe(0);
    expect(report.duplicates).toBe(0);
    expect(report.foreign).toBe(0);
    expect(before.other).toBe(0);
    expect(before.limited).toBeGreaterThan(0);
    // Redis down: the limiter fails open (every probe served), nothing errors.
    expect(during).toEqual({ ok: 30, limited: 0, other: 0 });
    expect(after.other).toBe(0);
  } finally {
    loading = false;
    await load;
    await ex.stop(2000);
    await transport.close();
  }
});

/** Delivery lag (first arrival at the receiver − the trigger's scheduled time), p50/max per phase:
 *  how the degradation shows (claims find tenants in Postgres; idle executors wake on their poll). */
async function lagByPhase(hits: Hit[], cutAt: number, restoredAt: number) {
  const due = new Map(
    (
      await query<{ id: string; ms: number }>(
        db.store.db,
        sql`SELECT id, (extract(epoch FROM scheduled_for) * 1000)::float8 AS ms FROM triggers`,
      )
    ).map((r) => [r.id, r.ms]),
  );
  const first = new Map<string, number>();
  for (const h of hits) if (!first.has(h.id)) first.set(h.id, h.at);
  const phases: Record<string, number[]> = { up: [], down: [], restored: [] };
  for (const [id, at] of first) {
    const d = due.get(id)!;
    phases[d < cutAt ? "up" : d < restoredAt ? "down" : "restored"].push(at - d);
  }
  return Object.fromEntries(
    Object.entries(phases).map(([k, v]) => {
      v.sort((a, b) => a - b);
      return [k, { n: v.length, p50: Math.round(v[v.length >> 1] ?? 0), max: Math.round(v[v.length - 1] ?? 0) }];
    }),
  );
}
