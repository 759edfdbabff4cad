// A table's columns as a raw select list in the row shape drizzle's own builders return (camelCase keys,
// timestamps as Dates), for the hot statements that run prepared through query() instead of a builder.
// Derived from the schema, so a new column shows up here without anyone editing a hand-written list.
import { getTableColumns, sql, type SQL } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
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
