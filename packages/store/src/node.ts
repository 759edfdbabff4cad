// Node-only entry: the embedded PGlite database and the migrator (both read the filesystem, so they
// stay out of the Worker bundle).
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Db, Store } from "./db.ts";
import * as schema from "./schema.ts";

// From sources: the repository's drizzle/. In a bundled package (the CLI): the copy next to the bundle.
const bundledMigrations = fileURLToPath(new URL("./drizzle", import.meta.url));
export const migrationsFolder = existsSync(join(bundledMigrations, "meta"))
  ? bundledMigrations
  : fileURLToPath(new URL("../../../drizzle", import.meta.url));

export async function connectPglite(dataDir?: string): Promise<Store> {
  const client = new PGlite(dataDir);
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return { kind: "pglite", db, close: () => client.close() };
}

export async function migrate(store: Store): Promise<void> {
  if (store.kind === "pglite") await migratePglite(store.db as never, { migrationsFolder });
  else await migratePostgres(store.db as never, { migrationsFolder });
}
