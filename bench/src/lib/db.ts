// Each scenario run gets its own database, copied from the migrated template the test suite uses
// (test/support/pg.ts), and drops it afterwards (peers install their own schema next to Fairway's): benchmarks never touch anyone else's data and work
// on a fresh clone with only the machine's Postgres.
import setupTemplate from "../../../test/support/global-setup.ts";
import { createTestDb, type TestDb } from "../../../test/support/pg.ts";

let templateReady: Promise<void> | null = null;

/** A fresh migrated database; `max` is the pool size of its store. */
export async function benchDb(max = 10): Promise<TestDb> {
  templateReady ??= setupTemplate();
  await templateReady;
  return createTestDb({ max });
}
