// The layout of a connection pool, determined once: forced at connect (connectPostgres `layout`), or
// read from the catalog on first use, awaited once and cached. A layout that cannot be read is an
// error for the caller (the read is tried again on the next call), never a silent default: the wrong
// layout would send every hot statement of a cluster to every shard, or split one PostgreSQL's claims.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import type { Layout, LayoutName } from "./layout.ts";
import { perTenant } from "./per-tenant.ts";
import { single } from "./single.ts";

export type { Layout, LayoutName, TenantShares } from "./layout.ts";
export { ALL_TENANTS, oneTenant, scopeTo, type Scope } from "./scope.ts";

export const LAYOUT_NAMES = ["single", "per-tenant"] as const satisfies readonly LayoutName[];

const layouts = new WeakMap<object, Promise<Layout>>();

/** The layout of `db` (a pool's handle, not a transaction's: a transaction takes its pool's layout
 *  from its caller). */
export function layoutOf(db: Db): Promise<Layout> {
  let known = layouts.get(db);
  if (!known) {
    known = detect(db);
    layouts.set(db, known);
    known.catch(() => layouts.delete(db));
  }
  return known;
}

/** Fix the layout of `db` at connect. `per-tenant` on plain PostgreSQL runs the cluster's statements
 *  there (the conformance suite); `single` is only right where `triggers` is not distributed. */
export function useLayout(db: Db, name: LayoutName): void {
  layouts.set(db, Promise.resolve(layoutNamed(name)));
}

/** The layout of that name, off a Citus cluster (the per-tenant layout lists no nodes). */
export function layoutNamed(name: LayoutName): Layout {
  return name === "single" ? single : perTenant(false);
}

/** The coordinator of a Citus cluster with `triggers` distributed by tenant is per-tenant; anything
 *  else single. */
async function detect(db: Db): Promise<Layout> {
  const [c] = await query<{ c: boolean }>(db, sql`SELECT to_regclass('pg_dist_partition') IS NOT NULL AS c`);
  if (!c?.c) return single;
  const [d] = await query<{ d: boolean }>(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid::text = 'triggers') AS d`,
  );
  return d?.d === true ? perTenant(true) : single;
}
