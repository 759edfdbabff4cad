// Which layout a connection pool has: fixed at connect (connectPostgres `layout`), or read from the
// catalog on first use, awaited once and cached. A layout that cannot be read is an error for the
// caller (the read is tried again on the next call), never a silent default: the wrong layout would
// send every hot statement of a cluster to every shard, or split one PostgreSQL's claims. Below the
// statements (it imports only the connection), so a read whose SQL shape differs by layout can ask it.
import { sql } from "drizzle-orm";
import { forcedLayout, query, type Db } from "../db.ts";
import type { LayoutName } from "./name.ts";

/** A pool's layout, and whether it is a Citus coordinator (its nodes can be listed). */
export interface LayoutKind {
  name: LayoutName;
  cluster: boolean;
}

const kinds = new WeakMap<object, Promise<LayoutKind>>();

/** The layout of `db` (a pool's handle, not a transaction's: a transaction takes its pool's layout
 *  from its caller). */
export function layoutKind(db: Db): Promise<LayoutKind> {
  let known = kinds.get(db);
  if (!known) {
    const forced = forcedLayout(db);
    known = forced ? Promise.resolve({ name: forced, cluster: false }) : detect(db);
    kinds.set(db, known);
    known.catch(() => kinds.delete(db));
  }
  return known;
}

/** The shape of a read whose SQL differs by layout (Layout.shape, for the statements below it). */
export async function readShape<T>(db: Db, shapes: { single: T; perTenant: T }): Promise<T> {
  return (await layoutKind(db)).name === "single" ? shapes.single : shapes.perTenant;
}

/** The coordinator of a Citus cluster with `triggers` distributed by tenant is per-tenant; anything
 *  else single. */
async function detect(db: Db): Promise<LayoutKind> {
  const [c] = await query<{ c: boolean }>(db, sql`SELECT to_regclass('pg_dist_partition') IS NOT NULL AS c`);
  if (!c?.c) return { name: "single", cluster: false };
  const [d] = await query<{ d: boolean }>(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid::text = 'triggers') AS d`,
  );
  return d?.d === true ? { name: "per-tenant", cluster: true } : { name: "single", cluster: false };
}
