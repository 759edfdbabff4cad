// Apply the generated migrations (drizzle/) to the Postgres in DATABASE_DIRECT_URL (or DATABASE_URL)
// and exit. Safe against a live database: it is the upgrade path (docs/production.md).
// The Worker never migrates (it has no filesystem, and N isolates must not race a schema change):
// run this once per deploy, before `wrangler deploy`.   DATABASE_URL=postgres://… npx tsx scripts/migrate.ts
import { connectPostgres } from "@fairway/store";
import { migrate } from "@fairway/store/node";

const url = process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL;
if (!url) {
  console.error(
    "DATABASE_URL is not set: point it (or DATABASE_DIRECT_URL) at Postgres itself, not at Hyperdrive or a pooler.",
  );
  process.exit(2);
}
const store = connectPostgres(url, { max: 1 });
try {
  await migrate(store);
  console.log(`migrations applied to ${url.replace(/\/\/[^@/]*@/, "//")}`);
} catch (err) {
  console.error(`migration failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await store.close();
}
