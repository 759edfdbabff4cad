// What a statement is for: every tenant, or one. On the per-tenant layout a statement for one tenant
// names it on every distributed table it reads or writes: Citus routes a statement by the constant on
// each table, not through joins, so one predicate left out sends it to every shard. For every tenant
// nothing is added and the statement is what it is on one PostgreSQL.
import { sql, type SQL } from "drizzle-orm";

export type Scope = { readonly tenantId: undefined } | { readonly tenantId: string };

/** Every tenant's rows (one statement on one PostgreSQL, or a read of every shard). */
export const ALL_TENANTS: Scope = Object.freeze({ tenantId: undefined });

/** One tenant's rows: on the per-tenant layout, a statement on its shard alone. */
export function oneTenant(tenantId: string): Scope {
  return { tenantId };
}

/** `AND <alias>.<column> = <tenant>` for one tenant, nothing for every tenant: the one "scope this
 *  statement to its tenant" helper. */
export function scopeTo(scope: Scope | string | undefined): (alias: string, column?: string) => SQL {
  const tenantId = typeof scope === "object" ? scope.tenantId : scope;
  return (alias, column = "tenant_id") =>
    tenantId === undefined ? sql`` : sql`AND ${sql.raw(`${alias}.${column}`)} = ${tenantId}`;
}
