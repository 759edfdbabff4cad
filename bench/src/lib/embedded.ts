// The embedded arm: a database on Fairway's own embedded PostgreSQL (what `npm start` runs without
// DATABASE_URL), on a cluster of its own in a temporary directory, stopped and removed by drop().
// Shaped like benchDb() so a scenario can run the same code on either.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@fairway/core";
import { connectPostgres } from "@fairway/store";
import { migrate } from "@fairway/store/node";
import { startEmbeddedPostgres } from "../../../apps/server/src/embedded-postgres.ts";
import type { TestDb } from "../../../test/support/pg.ts";

export async function embeddedDb(max = 10): Promise<TestDb> {
  const dataDir = mkdtempSync(join(tmpdir(), "fairway-bench-pg-"));
  const pg = await startEmbeddedPostgres({ dataDir, log: createLogger({ level: "error" }) });
  const store = connectPostgres(pg.url, { max });
  await migrate(store);
  return {
    name: "embedded",
    url: pg.url,
    store,
    async drop() {
      await store.close();
      await pg.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
