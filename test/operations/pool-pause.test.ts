// Pool pause: POST /v1/admin/pools/:type/pause stops claims of that type (work already running
// finishes), pending work waits and nothing is lost; /resume claims it all again. Shown in the pool's
// config and in /v1/admin/stats.
import { expect, it } from "vitest";
import { createApp } from "@fairway/api";
import { createMemoryCoordinator } from "@fairway/coord";
import { Executor, createFetchTransport } from "@fairway/executor";
import { query, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { until } from "../support/until.ts";
import { useTestDb } from "../support/use-db.ts";

const ADMIN = "admin-token-for-pause-tests";
const h = useTestDb();

const statusCounts = async () =>
  Object.fromEntries(
    (
      await query<{ status: string; n: number }>(h.db, sql`SELECT status, count(*)::int AS n FROM triggers GROUP BY 1`)
    ).map((r) => [r.status, r.n]),
  ) as Record<string, number>;

it("pause stops claims of the type, running work finishes, resume claims the rest; nothing lost or run twice", async () => {
  const app = createApp({
    db: h.db,
    coordinator: createMemoryCoordinator(),
    adminToken: ADMIN,
    allowPrivateTargets: true,
  });
  const admin = async (method: string, path: string) => {
    const res = await app.request(path, { method, headers: { authorization: `Bearer ${ADMIN}` } });
    return { status: res.status, json: (await res.json()) as any };
  };
  await seedTenant(h.db, "a", { maxInFlight: 100 });
  await seedPool(h.db, "work", 5);
  await seedPool(h.db, "other", 5);
  const { triggerIds } = await seedDue(h.db, "a", 20, { type: "work" });
  await seedDue(h.db, "a", 3, { type: "other" });

  // Five runs held open in their handlers when the pool is paused.
  const gate: Array<() => void> = [];
  const runs = new Map<string, number>();
  const handler = async (ctx: { triggerId: string }) => {
    runs.set(ctx.triggerId, (runs.get(ctx.triggerId) ?? 0) + 1);
    if (gate.length < 5) await new Promise<void>((r) => gate.push(r));
  };
  const ex = new Executor({
    db: h.db,
    transport: createFetchTransport(),
    handlers: { work: handler, other: async () => {} },
    pollMs: 10,
  });
  await ex.tick(); // claims the five slots of "work" and its queue ahead, and all of "other"
  await until(
    async () => gate.length,
    (n) => n === 5,
  );
  const claimedBefore = ex.stats.claimed;
  expect(claimedBefore).toBeGreaterThan(8);

  const paused = await admin("POST", "/v1/admin/pools/work/pause");
  expect(paused.status).toBe(200);
  expect(paused.json).toMatchObject({ type: "work", paused: true, concurrency: 5 });
  expect((await admin("GET", "/v1/admin/pools/work")).json.paused).toBe(true);
  expect((await admin("POST", "/v1/admin/pools/no%20such/pause")).json.error.code).toBe("validation_error");

  // Neither this executor (its pool config still says running) nor a new one claims more of "work".
  const ex2 = new Executor({
    db: h.db,
    transport: createFetchTransport(),
    handlers: { work: handler, other: async () => {} },
    pollMs: 10,
  });
  for (let i = 0; i < 3; i++) {
    await ex.tick();
    await ex2.tick();
  }
  expect(ex.stats.claimed).toBe(claimedBefore);
  expect(ex2.stats.claimed).toBe(0);

  // What was claimed before the pause runs and settles while paused; the rest waits as pending.
  for (const open of gate) open();
  await until(statusCounts, (c) => c.succeeded === claimedBefore);
  await ex.stop(1000);
  const waiting = 23 - claimedBefore;
  expect(await statusCounts()).toEqual({ succeeded: claimedBefore, pending: waiting });
  const stats = (await admin("GET", "/v1/admin/stats")).json;
  expect(stats.pools.find((p: any) => p.type === "work")).toMatchObject({
    paused: true,
    pending: waiting,
    due: waiting,
    running: 0,
  });
  await ex2.tick();
  expect(ex2.stats.claimed).toBe(0);

  const resumed = await admin("POST", "/v1/admin/pools/work/resume");
  expect(resumed.json.paused).toBe(false);
  ex2.start();
  try {
    await until(statusCounts, (c) => c.succeeded === 23);
  } finally {
    await ex2.stop(1000);
  }
  for (const id of triggerIds) expect(runs.get(id)).toBe(1);
  expect((await admin("GET", "/v1/admin/stats")).json.pools.find((p: any) => p.type === "work")).toMatchObject({
    paused: false,
    pending: 0,
    running: 0,
  });
});
