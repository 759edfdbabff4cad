// A fresh database per test file, without the beforeAll/afterAll lines each file repeated. Kept apart
// from pg.ts, which the bench (no vitest) imports too.
import { afterAll, beforeAll } from "vitest";
import type { Db, LayoutName } from "@fairway/store";
import { createTestDb, type TestDb } from "./pg.ts";

/** Created before the file's tests, dropped after them. Read `t` and `db` inside tests and hooks. */
export function useTestDb(opts: { max?: number; layout?: LayoutName } = {}): { readonly t: TestDb; readonly db: Db } {
  let t: TestDb | undefined;
  beforeAll(async () => {
    t = await createTestDb(opts);
  });
  afterAll(async () => {
    await t?.drop();
  });
  return {
    get t() {
      if (!t) throw new Error("the test database exists only inside tests and hooks");
      return t;
    },
    get db() {
      return this.t.store.db;
    },
  };
}
