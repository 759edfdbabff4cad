// Packed rows: how the claim and the settle send their many rows back to Node. Fields are joined by
// the unit separator (U+001F) and rows by the record separator (U+001E) into one text value.
//
// Postgres's json_build_array looks up every argument's type on every call and JSON-escapes every
// character; joined text needs neither, and Node splits it for about what JSON.parse costs
// (docs/decisions/0008-packed-text-rows.md).
//
// It is safe only for fields that can never hold the two separators: trigger ids (made by newId()
// alone), tenant ids, job ids and pool types (the schema's `printable` checks refuse control
// characters in them, whoever writes the row; triggers copy theirs from tenants and jobs), enumerated
// words and numbers. Anything free-form (job names, payloads, targets, error text) stays JSON.
import { sql, type SQL } from "drizzle-orm";

const FIELD = "\u001f";
const ROW = "\u001e";

/** An aggregate over the current FROM: each row's `fields` (a comma list of SQL expressions, none of
 *  them NULL: concat_ws leaves NULLs out, and unpackRows() would reject the short row) joined into one
 *  text value, '' for no rows. */
export function packRows(fields: SQL): SQL {
  return sql`coalesce(string_agg(concat_ws(chr(31), ${fields}), chr(30)), '')`;
}

/** The rows of a packRows() value, each exactly `width` text fields. A row of any other width means
 *  a field held a separator: that is a broken invariant, not data to guess at. */
export function unpackRows(packed: string | null, width: number): string[][] {
  if (!packed) return [];
  return packed.split(ROW).map((line) => {
    const f = line.split(FIELD);
    if (f.length !== width) throw new Error(`packed row has ${f.length} fields, expected ${width}`);
    return f;
  });
}
