// Node-only entry: the embedded PGlite database and the migrator (both read the filesystem, so they
// stay out of the Worker bundle).
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { fileURLToPath } from "node:url";
import type { Db, Store } from "./db.ts";
import * as schema from "./schema.ts";

export const migrationsFolder = fileURLToPath(new URL("../../../drizzle", import.meta.url));

export async function connectPglite(dataDir?: string): Promise<Store> {
  const client = new PGlite(dataDir);
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as Db;
  return { kind: "pglite", db, close: () => client.close() };
}

export async function migrate(store: Store): Promise<void> {
  if (store.kind === "pglite") await migratePglite(store.db as never, { migrationsFolder });
  else await migratePostgres(store.db as never, { migrationsFolder });
}
