// Deadlock-free by construction: a mixed workload on one PostgreSQL for half a minute (support
// mixed-workload.ts). Postgres's own count of deadlocks in the database must not move, and no component
// may log one. The lock order the statements keep is in docs/guarantees.md ("Lock order").
import { afterAll, beforeAll, expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { mixedWorkload } from "../support/mixed-workload.ts";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";

let db: TestDb;
let receiver: Receiver;

beforeAll(async () => {
  db = await createTestDb({ max: 10 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await db?.drop();
});

/** Deadlocks Postgres detected in this database so far. */
async function deadlocks(): Promise<number> {
  const [r] = await query<{ n: number }>(
    db.store.db,
    sql`SELECT pg_stat_clear_snapshot(), (SELECT deadlocks::int FROM pg_stat_database WHERE datname = current_database()) AS n`,
  );
  return r!.n;
}

it("a mixed workload from the API and two executors for half a minute: no deadlock", { timeout: 120_000 }, async () => {
  const before = await deadlocks();
  const r = await mixedWorkload(db.store.db, receiver, 30_000);
  const detected = (await deadlocks()) - before;
  console.log(JSON.stringify({ drill: "deadlocks", layout: "postgres", detected, ...r }));
  expect(r.deliveries).toBeGreaterThan(500);
  expect(r.deadlocks).toEqual([]);
  expect(detected).toBe(0);
});
