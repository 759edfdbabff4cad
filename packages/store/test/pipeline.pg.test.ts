// pipelineTx (db.ts): a whole transaction in one round trip on a reserved postgres.js connection. What
// must hold: all or nothing; a later statement sees what an earlier one set; a statement error leaves
// the connection usable; a connection killed mid-pipeline rejects the call and the pool recovers (a
// dead connection handed back as open would hang or fail every later query on a one-connection pool).
// And the claim's transaction-local plan setting stays inside its transaction.
import { afterAll, beforeAll, expect, it } from "vitest";
import postgres from "postgres";
import { claim, connectPostgres, query, sql, type Store } from "@fairway/store";
import { pipelineTx } from "../src/db.ts";
import { createTestDb, type TestDb } from "../../../test/support/pg.ts";
import { seedDue, seedPool, seedTenant } from "../../../test/support/seed.ts";

let t: TestDb;
let one: Store; // max 1 connection: any connection mishandled shows up on the next query

beforeAll(async () => {
  t = await createTestDb();
  one = connectPostgres(t.url, { max: 1 });
  await query(one.db, sql`CREATE TABLE pipe (k int PRIMARY KEY)`);
});

afterAll(async () => {
  await one?.close();
  await t?.drop();
});

const keys = async () => (await query<{ k: number }>(one.db, sql`SELECT k FROM pipe ORDER BY k`)).map((r) => r.k);

it("commits every statement and passes values on through transaction-local settings", async () => {
  const [a, b] = await pipelineTx(one.db, [
    sql`SELECT set_config('fairway.test', '41', true) AS v`,
    sql`INSERT INTO pipe (k) VALUES (current_setting('fairway.test')::int + 1) RETURNING k`,
  ]);
  expect(a).toEqual([{ v: "41" }]);
  expect(b).toEqual([{ k: 42 }]);
  expect(await keys()).toEqual([42]);
  // transaction-local: gone after COMMIT
  expect(await query(one.db, sql`SELECT current_setting('fairway.test', true) AS v`)).toEqual([{ v: "" }]);
});

it("a failing statement rolls back the earlier ones, throws the first error, and the connection stays usable", async () => {
  await expect(
    pipelineTx(one.db, [
      sql`INSERT INTO pipe (k) VALUES (1)`,
      sql`INSERT INTO pipe (k) VALUES (42)`,
      sql`INSERT INTO pipe (k) VALUES (2)`,
    ]),
  ).rejects.toMatchObject({ code: "23505" });
  expect(await keys()).toEqual([42]);
  await pipelineTx(one.db, [sql`INSERT INTO pipe (k) VALUES (3)`]);
  expect(await keys()).toEqual([3, 42]);
});

// Parameters matter: a statement with parameters not yet prepared on the connection is described
// first, and postgres.js holds the statements after it client-side until it completes; a hand-rolled
// pipeline then never heard of them again when the connection died (hung forever).
it.each([
  ["no parameters", [sql`INSERT INTO pipe (k) VALUES (7)`, sql`SELECT pg_sleep(30)`]],
  [
    "parameters, statements queued client-side",
    [sql`SELECT pg_sleep(${30}::float8)`, sql`INSERT INTO pipe (k) VALUES (${7}::int)`],
  ],
])(
  "a connection killed mid-pipeline (%s) rejects the call, writes nothing, and the pool reconnects",
  async (_, statements) => {
    const admin = postgres(t.url, { max: 1, onnotice: () => {} });
    try {
      const [{ pid }] = await query<{ pid: number }>(one.db, sql`SELECT pg_backend_pid() AS pid`);
      // Its outcome is taken at once: the connection can close while the test still awaits the kill, and a
      // rejection nobody is listening for yet is an unhandled rejection (which fails the whole run).
      const outcome = pipelineTx(one.db, statements).then(
        () => "resolved",
        (err: unknown) => err,
      );
      // Wait until the pipeline's backend is sleeping, then kill it.
      for (let i = 0; i < 200; i++) {
        const [s] = await admin`SELECT wait_event FROM pg_stat_activity WHERE pid = ${pid}`;
        if (s?.wait_event === "PgSleep") break;
        await new Promise((r) => setTimeout(r, 25));
      }
      await admin`SELECT pg_terminate_backend(${pid})`;
      expect(await outcome).toMatchObject({ code: expect.stringMatching(/^(CONNECTION_CLOSED|57P01)$/) });
      // postgres.js hands the server's FATAL to the next query on that connection as well (it does the
      // same after a killed db.transaction); from then on the one connection must work, repeatedly, and
      // the killed transaction must have left nothing.
      await keys().catch((err: { code?: string }) => expect(["57P01", "CONNECTION_CLOSED"]).toContain(err.code));
      for (let i = 0; i < 3; i++) expect(await keys()).toEqual([3, 42]);
      await pipelineTx(one.db, [sql`INSERT INTO pipe (k) VALUES (8)`]);
      expect(await keys()).toEqual([3, 8, 42]);
      await query(one.db, sql`DELETE FROM pipe WHERE k = 8`);
    } finally {
      await admin.end({ timeout: 1 });
    }
  },
);

it("a claim's plan setting (generic up to 500 rows, custom above) ends with its transaction", async () => {
  await seedTenant(one.db, "pc1", { maxInFlight: 10 });
  await seedPool(one.db, "work", 10);
  await seedDue(one.db, "pc1", 3);
  const planMode = async () =>
    (await query<{ m: string }>(one.db, sql`SELECT current_setting('plan_cache_mode') AS m`))[0].m;
  expect(await planMode()).toBe("auto");
  // The second claim runs the statements the first prepared on this connection, with the other mode.
  expect(await claim(one.db, { type: "work", budget: 2, owner: "exe_p", leaseMs: 60_000 })).toHaveLength(2);
  expect(await planMode()).toBe("auto");
  expect(await claim(one.db, { type: "work", budget: 600, owner: "exe_p", leaseMs: 60_000 })).toHaveLength(1);
  // The one connection's other statements (the materializer, the API) keep custom plans.
  expect(await planMode()).toBe("auto");
  const [{ n }] = await query<{ n: number }>(
    one.db,
    sql`SELECT count(*)::int AS n FROM triggers WHERE status = 'running'`,
  );
  expect(n).toBe(3);
});
