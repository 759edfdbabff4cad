// Once per test run: build the migrated template database if this schema has none yet.
import { connectPostgres } from "@fairway/store";
import { migrate } from "@fairway/store/node";
import { templateName, urlFor, withAdmin } from "./pg.ts";

export default async function setup() {
  const tpl = templateName();
  const exists = await withAdmin(
    async (sql) => (await sql`SELECT 1 FROM pg_database WHERE datname = ${tpl}`).length > 0,
  );
  if (exists) return;
  const building = `${tpl}_build_${process.pid}`;
  await withAdmin((sql) => sql.unsafe(`CREATE DATABASE ${building}`));
  const store = connectPostgres(urlFor(building), { max: 1 });
  try {
    await migrate(store);
  } finally {
    await store.close();
  }
  // Rename into place: a concurrent run never sees a half-migrated template.
  await withAdmin(async (sql) => {
    try {
      await sql.unsafe(`ALTER DATABASE ${building} RENAME TO ${tpl}`);
    } catch {
      await sql.unsafe(`DROP DATABASE IF EXISTS ${building}`);
    }
    // Old templates from earlier schemas. Only in CI: on a developer machine several checkouts with
    // different migrations may be running their suites against the same server at once.
    if (!process.env.CI) return;
    const old =
      await sql`SELECT datname FROM pg_database WHERE datname LIKE 'fairway_tpl_%' AND datname <> ${tpl} AND datname NOT LIKE '%_build_%'`;
    for (const { datname } of old) await sql.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
  });
}
