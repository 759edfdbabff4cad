// The pooler arm: a fresh database (as benchDb) reached through PgBouncer in transaction mode with its
// default settings (Debian's 1.18, started on a free loopback port for the arm and stopped by drop()),
// connected as Fairway connects behind a transaction pooler: without named prepared statements.
import { connectPostgres } from "@fairway/store";
import type { TestDb } from "../../../test/support/pg.ts";
import { startPgBouncer } from "../../../test/production/support/processes.ts";
import { benchDb } from "./db.ts";

export async function pooledDb(max = 10): Promise<TestDb> {
  const direct = await benchDb(1);
  const bouncer = await startPgBouncer();
  const store = connectPostgres(bouncer.url(direct.name), { max, prepare: false });
  return {
    name: direct.name,
    url: bouncer.url(direct.name),
    store,
    async drop() {
      await store.close();
      await bouncer.stop();
      await direct.drop();
    },
  };
}
