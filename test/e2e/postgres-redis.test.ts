import { createTestDb } from "../support/pg.ts";
import { REDIS_URL } from "../support/redis.ts";
import { verticalSlice } from "./vertical-slice.ts";

// The same slice with DATABASE_URL (real Postgres 15) and REDIS_URL (real Redis 7).
verticalSlice("Postgres + Redis", async () => {
  const db = await createTestDb();
  await db.store.close();
  return { env: { DATABASE_URL: db.url, REDIS_URL }, cleanup: () => db.drop() };
});
