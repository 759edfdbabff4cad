// The migrator as scripts/migrate.ts runs it, on the migrations in the folder given as the argument:
// the online-migration drill applies its own last migration this way.
import { connectPostgres } from "@fairway/store";
import { migrate } from "@fairway/store/node";

const [folder] = process.argv.slice(2);
const store = connectPostgres(process.env.DATABASE_URL!, { max: 1 });
try {
  await migrate(store, { migrationsFolder: folder });
  console.log("migrations applied");
} catch (err) {
  console.error(`migration failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await store.close();
}
