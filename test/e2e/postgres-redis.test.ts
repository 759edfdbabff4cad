import { createTestDb } from "../support/pg.ts";
import { deletePrefix, REDIS_URL, testPrefix } from "../support/redis.ts";
import { verticalSlice } from "./vertical-slice.ts";

// The same slice with DATABASE_URL (real Postgres 15) and REDIS_URL (real Redis 7), under a key prefix
// of its own (FAIRWAY_REDIS_PREFIX), deleted afterwards: the shared Redis may hold anyone's keys.
verticalSlice("Postgres + Redis", async () => {
  const db = await createTestDb();
  await db.store.close();
  const prefix = testPrefix("e2e");
  return {
    env: { DATABASE_URL: db.url, REDIS_URL, FAIRWAY_REDIS_PREFIX: prefix },
    cleanup: async () => {
      await db.drop();
      // The slice's jobs went through the ready-tenant index: its keys must be under our prefix.
      if ((await deletePrefix(prefix)) === 0) throw new Error(`the server wrote no Redis keys under ${prefix}`);
    },
  };
});
