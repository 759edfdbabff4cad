// A tenant at its in-flight cap gets a slot back only when a finished run is settled, so its results
// must not wait out the settle linger meant for batching (settler.ts, ClaimedTrigger.atCap). With a
// linger no test run reaches, a tenant capped at 1 still gets through its backlog one run at a time
// (the uncapped tenant's results go along with its writes, or with stop()'s).
import { expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { seedDue, seedPool, seedTenant } from "../../../test/support/seed.ts";
import { Executor } from "../src/executor.ts";

const pg = useTestDb();

const statuses = async () =>
  Object.fromEntries(
    (
      await query<{ tenant_id: string; status: string; n: number }>(
        pg.db,
        sql`SELECT tenant_id, status, count(*)::int AS n FROM triggers GROUP BY tenant_id, status`,
      )
    ).map((r) => [`${r.tenant_id}:${r.status}`, r.n]),
  );

it("a tenant capped at 1 works through its backlog under a linger no run reaches", async () => {
  await seedTenant(pg.db, "one", { maxInFlight: 1 });
  await seedTenant(pg.db, "many", { maxInFlight: 100 });
  await seedPool(pg.db, "work", 10);
  await seedDue(pg.db, "one", 12);
  await seedDue(pg.db, "many", 5);
  let concurrentOne = 0;
  let maxConcurrentOne = 0;
  const executor = new Executor({
    db: pg.db,
    transport: () => Promise.reject(new Error("no webhooks here")),
    handlers: {
      work: async (ctx) => {
        if (ctx.tenantId !== "one") return;
        maxConcurrentOne = Math.max(maxConcurrentOne, ++concurrentOne);
        await new Promise((r) => setTimeout(r, 1));
        concurrentOne--;
      },
    },
    pollMs: 20,
    settleLingerMs: 600_000,
  }).start();
  try {
    await expect.poll(statuses, { timeout: 20_000 }).toMatchObject({ "one:succeeded": 12 });
    expect(maxConcurrentOne).toBe(1);
  } finally {
    await executor.stop(2_000);
  }
  expect(await statuses()).toEqual({ "one:succeeded": 12, "many:succeeded": 5 });
});
