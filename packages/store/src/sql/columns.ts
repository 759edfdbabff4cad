// A table's columns as a raw select list in the row shape drizzle's own builders return (camelCase keys,
// timestamps as Dates), for the hot statements that run prepared through query() instead of a builder.
// Derived from the schema, so a new column shows up here without anyone editing a hand-written list.
import { getTableColumns, sql, type SQL } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { TENANT_BOUNDS } from "@fairway/core";
import { withDates } from "../db.ts";

export interface RowShape<T> {
  /** `"col" AS "key", …`, each column qualified by `alias` when one is given. */
  list: SQL;
  /** Turn raw rows (timestamps as text on both drivers) into the table's row type. */
  rows(raw: Record<string, unknown>[]): T[];
}

export function rowShape<T>(table: PgTable, alias?: string): RowShape<T> {
  const columns = Object.entries(getTableColumns(table));
  const from = alias ? `"${alias}".` : "";
  const list = sql.raw(columns.map(([key, col]) => `${from}"${col.name}" AS "${key}"`).join(", "));
  const dates = columns.filter(([, col]) => col.dataType === "date").map(([key]) => key);
  return { list, rows: (raw) => withDates(raw, ...dates) as T[] };
}

/** A tenant's weight and rate as a claim may use them: clamped into TENANT_BOUNDS (NaN and ±Infinity
 *  included), so a value stored outside them (by hand, or before the bounds) cannot underflow or
 *  overflow the claim's float8 arithmetic and fail the claim for every tenant. `t` is the tenants alias. */
export const boundedWeight = (t: string) =>
  sql.raw(`greatest(${TENANT_BOUNDS.weight.min}, least(${TENANT_BOUNDS.weight.max}, ${t}.weight))`);
export const boundedRate = (t: string) =>
  sql.raw(
    // least/greatest skip NULLs: without the CASE, "no rate limit" would become the maximum rate.
    `CASE WHEN ${t}.rate_per_second IS NULL THEN NULL ELSE greatest(${TENANT_BOUNDS.ratePerSecond.min}, least(${TENANT_BOUNDS.ratePerSecond.max}, ${t}.rate_per_second)) END`,
  );

/** A key's weight or rate (an override's, or its tenant's key default) as the claim and settle use
 *  it: clamped into the same bounds as a tenant's, for the same reason (cost ÷ 5e-324 overflows).
 *  `e` is the expression; NULL (no rate limit) stays NULL. */
export const boundedKeyWeight = (e: SQL) =>
  sql`greatest(${sql.raw(String(TENANT_BOUNDS.weight.min))}, least(${sql.raw(String(TENANT_BOUNDS.weight.max))}, ${e}))`;
export const boundedKeyRate = (e: SQL) =>
  sql`CASE WHEN (${e}) IS NULL THEN NULL ELSE greatest(${sql.raw(String(TENANT_BOUNDS.ratePerSecond.min))}, least(${sql.raw(String(TENANT_BOUNDS.ratePerSecond.max))}, ${e})) END`;
