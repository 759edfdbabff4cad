// /healthz and /readyz ask the database on the probe connection (AppDeps.probeDb), not on the pool
// tenants' requests hold: with the pool's one connection busy, the probes still answer, and they are
// answered first. Without a probe connection they wait for the pool, which is what the control shows.
import { createMemoryCoordinator } from "@fairway/coord";
import { createApp } from "@fairway/api";
import { connectPostgres, sql } from "@fairway/store";
import { expect, test } from "vitest";
import { until } from "../support/until.ts";
import { withAdmin } from "../support/pg.ts";
import { useTestDb } from "../support/use-db.ts";

const pool = useTestDb({ max: 1 });

/** The order in which the pool's long statement and the probe's answer settle. */
async function order(path: string, probe: boolean): Promise<string[]> {
  const probeStore = probe ? connectPostgres(pool.t.url, { max: 1 }) : null;
  try {
    const app = createApp({
      db: pool.db,
      ...(probeStore ? { probeDb: probeStore.db } : {}),
      coordinator: createMemoryCoordinator(),
      adminToken: "fwadmin_probe_test_0123456789",
      allowPrivateTargets: true,
    });
    const done: string[] = [];
    // The pool's one connection, held by a tenant's long statement.
    const busy = pool.db.execute(sql`select pg_sleep(2)`).then(() => done.push("pool"));
    // Once the statement runs (its connection taken), the probe.
    await until(
      () =>
        withAdmin(
          (admin) => admin<{ n: number }[]>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = ${pool.t.name} AND query LIKE 'select pg_sleep(2)%' AND state = 'active'`,
        ),
      (rows) => (rows[0]?.n ?? 0) > 0,
      10_000,
      "the tenant's statement running",
    );
    const answer = Promise.resolve(app.request(path)).then(async (r) => {
      done.push(`probe ${r.status}`);
      return r.json();
    });
    await Promise.all([busy, answer]);
    return done;
  } finally {
    await probeStore?.close();
  }
}

test("with the pool busy, /healthz and /readyz answer on their own connection first", async () => {
  expect(await order("/healthz", true)).toEqual(["probe 200", "pool"]);
  expect(await order("/readyz", true)).toEqual(["probe 200", "pool"]);
  // The control: on the pool, the probe waits for the tenant's statement.
  expect(await order("/healthz", false)).toEqual(["pool", "probe 200"]);
});
