// The ready-tenant index in Redis is coordination, never correctness (docs/architecture.md): work completes
// through it; a flush mid-run is rebuilt from Postgres; with Redis down, candidates come from Postgres;
// and when the work is done the index drains (tenants with nothing pending are removed).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisCoordinator, type Coordinator } from "@fairway/coord";
import { Executor, createFetchTransport } from "@fairway/executor";
import { query, sql, type Db } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { deletePrefix, REDIS_URL, testPrefix } from "../support/redis.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { until } from "../support/until.ts";

const isTrue = (v: boolean) => v;

const remaining = async (db: Db, type: string) =>
  (
    await query<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM triggers WHERE type = ${type} AND status <> 'succeeded'`,
    )
  )[0].n;

describe("ready-tenant index", () => {
  let t: TestDb;
  const prefix = testPrefix("ready");
  let coord: Coordinator;
  beforeAll(async () => {
    t = await createTestDb();
    coord = createRedisCoordinator({ url: REDIS_URL, prefix });
  });
  afterAll(async () => {
    await coord?.close();
    await deletePrefix(prefix);
    await t?.drop();
  });

  async function seed(type: string) {
    await seedPool(t.store.db, type, 8);
    for (let i = 0; i < 5; i++) {
      await seedTenant(t.store.db, `${type}-${i}`, { maxInFlight: 3 });
      await seedDue(t.store.db, `${type}-${i}`, 40, { type, initialDelayMs: 10 });
    }
  }

  function executor(type: string, readyIndex: Coordinator, failFirst = new Set<string>()) {
    return new Executor({
      db: t.store.db,
      transport: createFetchTransport(),
      readyIndex,
      pollMs: 20,
      handlers: {
        [type]: async (ctx) => {
          // Every 7th trigger fails its first attempt: retries must come back through the index.
          if (ctx.attempt === 1 && failFirst.has(ctx.triggerId)) throw new Error("first attempt fails");
        },
      },
    }).start();
  }

  it("completes all work through the index, survives a flush, retries, then drains", async () => {
    await seed("ri");
    const ids = await query<{ id: string }>(t.store.db, sql`SELECT id FROM triggers WHERE type = 'ri' ORDER BY id`);
    const e = executor("ri", coord, new Set(ids.filter((_, i) => i % 7 === 0).map((r) => r.id)));
    await until(async () => (await remaining(t.store.db, "ri")) < 150, isTrue);
    await deletePrefix(prefix); // Redis flushed mid-run
    await until(async () => (await remaining(t.store.db, "ri")) === 0, isTrue);
    // Rebuilt from Postgres by the claim loop's next look at the index (at most a second after the
    // flush): the work may have finished sooner, through claims made with the settles (hand-off).
    await until(() => coord.hasReadyIndex("ri"), isTrue, 5_000);
    await e.stop();
    const retried = await query<{ n: number }>(
      t.store.db,
      sql`SELECT count(*)::int AS n FROM attempts WHERE outcome = 'handler_error'`,
    );
    expect(retried[0].n).toBe(Math.ceil(200 / 7));
    // With nothing pending, the claimer removes tenants from the index.
    const e2 = executor("ri", coord);
    await until(async () => (await coord.readyTenants("ri", Date.now() + 3_600_000, 100)).length === 0, isTrue);
    await e2.stop();
  }, 60_000);

  it("with Redis down, candidates come from Postgres and all work completes", async () => {
    await seed("down");
    const dead = createRedisCoordinator({ url: "redis://127.0.0.1:1", commandTimeoutMs: 100 });
    const e = executor("down", dead);
    await until(async () => (await remaining(t.store.db, "down")) === 0, isTrue);
    await e.stop();
    await dead.close();
    const dup = await query<{ n: number }>(
      t.store.db,
      sql`SELECT count(*)::int AS n FROM attempts a JOIN triggers x ON x.id = a.trigger_id WHERE x.type = 'down'`,
    );
    expect(dup[0].n).toBe(200); // one attempt each: nothing lost, nothing twice
  }, 60_000);
});
