// Node-only entry: the migrator (it reads the migrations from the filesystem, so it stays out of the
// Worker bundle).
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Store } from "./db.ts";

// From sources: the repository's drizzle/. In a bundled package (the CLI): the copy next to the bundle.
const bundledMigrations = fileURLToPath(new URL("./drizzle", import.meta.url));
export const migrationsFolder = existsSync(join(bundledMigrations, "meta"))
  ? bundledMigrations
  : fileURLToPath(new URL("../../../drizzle", import.meta.url));

export async function migrate(store: Store): Promise<void> {
  await migratePostgres(store.db as never, { migrationsFolder });
}
