// Node-only entry: the migrator (it reads the migrations from the filesystem, so it stays out of the
// Worker bundle).
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { fileURLToPath } from "node:url";
import type { Store } from "./db.ts";

export const migrationsFolder = fileURLToPath(new URL("../../../drizzle", import.meta.url));

export async function migrate(store: Store): Promise<void> {
  await migratePostgres(store.db as never, { migrationsFolder });
}
