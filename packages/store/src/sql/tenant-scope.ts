// A hot statement for one tenant names it on every distributed table it reads or writes: on a Citus
// cluster (docs/scaling.md) Citus routes a statement by the constant on each table, not through joins,
// so one predicate left out sends the statement to every shard. Without a tenant, nothing is added and
// the statement is what it is on plain PostgreSQL.
import { sql, type SQL } from "drizzle-orm";

/** `AND <alias>.<column> = tenantId`, or nothing without a tenant. */
export function atTenant(tenantId: string | undefined): (alias: string, column?: string) => SQL {
  return (alias, column = "tenant_id") =>
    tenantId === undefined ? sql`` : sql`AND ${sql.raw(`${alias}.${column}`)} = ${tenantId}`;
}
