// Real Postgres for tests: a template database migrated once per run, and one database
// per test file copied from it with CREATE DATABASE … TEMPLATE (fast, isolated, never assumes an empty
// server). The template's name carries a hash of the migrations, so a schema change builds a new one.
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { connectPostgres, type LayoutName, type Store } from "@fairway/store";
import { migrationsFolder, plannerDefaultsFor } from "@fairway/store/node";

export const PG_BASE_URL = process.env.FAIRWAY_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";

export function urlFor(database: string): string {
  const u = new URL(PG_BASE_URL);
  u.pathname = `/${database}`;
  return u.toString();
}

export function templateName(): string {
  const h = createHash("sha256");
  for (const f of readdirSync(migrationsFolder)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    h.update(readFileSync(join(migrationsFolder, f)));
  }
  return `fairway_tpl_${h.digest("hex").slice(0, 12)}`;
}

export async function withAdmin<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(PG_BASE_URL, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export interface TestDb {
  name: string;
  url: string;
  store: Store;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own; drop() closes and removes it. `layout`: its store's layout
 *  fixed (the conformance suite runs the per-tenant layout's statements on plain PostgreSQL). */
export async function createTestDb(opts: { max?: number; layout?: LayoutName } = {}): Promise<TestDb> {
  const name = `fairway_t_${randomBytes(6).toString("hex")}`;
  await withAdmin(async (sql) => {
    await sql.unsafe(`CREATE DATABASE ${name} TEMPLATE ${templateName()}`);
    // A copy does not inherit its template's role defaults; migrate() set them on the template.
    for (const s of plannerDefaultsFor(name)) await sql.unsafe(s);
  });
  const url = urlFor(name);
  const store = connectPostgres(url, { max: opts.max ?? 5, ...(opts.layout ? { layout: opts.layout } : {}) });
  return {
    name,
    url,
    store,
    async drop() {
      await store.close();
      await withAdmin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
