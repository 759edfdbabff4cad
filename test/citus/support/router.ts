// What the hot-path tests assert of a statement on the distributed layout (docs/scaling.md): Citus
// sends it whole to the node of one shard group. EXPLAIN on the coordinator shows the plan Citus chose:
// a router plan has `Task Count: 1`, and no `Distributed Subplan` (a subplan is a query of its own,
// run first, whose rows the coordinator ships to the task: another round trip, and for a read across
// tenants a scan of every shard).
import postgres from "postgres";
import { expect } from "vitest";
import { connectPostgres, query, sql, type Db, type Store } from "@fairway/store";
import { migrate } from "../../../packages/store/src/node.ts";
import type { CitusCluster } from "./cluster.ts";

type Statement = ReturnType<typeof sql>;

/** The coordinator's EXPLAIN of `statement`, as one text. */
export async function planOf(db: Db, statement: Statement): Promise<string> {
  const rows = await query<{ "QUERY PLAN": string }>(db, sql`EXPLAIN ${statement}`);
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

/** planOf() for a statement as a driver sent it: its text, with $n placeholders, and its parameters. */
export async function planOfText(db: Db, text: string, params: unknown[]): Promise<string> {
  const parts = text.split(/\$(\d+)/);
  let statement = sql.raw(parts[0]!);
  for (let i = 1; i < parts.length; i += 2)
    statement = sql`${statement}${params[Number(parts[i]) - 1]}${sql.raw(parts[i + 1]!)}`;
  return planOf(db, statement);
}

/** Fails unless Citus runs `statement` as one task on one shard group, with no subplan. */
export async function expectSingleShard(db: Db, statement: Statement): Promise<void> {
  const plan = await planOf(db, statement);
  expect(plan, plan).toMatch(/Task Count: 1\b/);
  expect(plan, plan).not.toMatch(/Distributed Subplan/);
}

/** Fails unless the coordinator sends `statement` (a call of a delegated function, store
 *  sql/delegated.ts) to one node as that call alone: the function's statements run there, and the
 *  coordinator plans none of them. Read from the commands Citus logs as it sends them. */
export async function expectDelegated(db: Db, url: string, statement: Statement): Promise<unknown[]> {
  const sent: string[] = [];
  const client = postgres(url, {
    max: 1,
    onnotice: (n) => {
      if (/^issuing /.test(n.message)) sent.push(n.message);
    },
  });
  // JSON parameters go as the text they are, as the store's driver sends them (drizzle's postgres-js).
  const serializers = (client as unknown as { options: { serializers: Record<string, (x: unknown) => unknown> } })
    .options.serializers;
  for (const oid of ["114", "3802"]) serializers[oid] = (x) => x;
  try {
    await client.unsafe("SET citus.log_remote_commands = on");
    await client.unsafe("SET client_min_messages = log");
    // The text and parameters the store's own driver would send (db.ts, query).
    const q = (
      db as unknown as { dialect: { sqlToQuery(s: Statement): { sql: string; params: unknown[] } } }
    ).dialect.sqlToQuery(statement);
    const rows = await client.unsafe(q.sql, q.params as never[]);
    expect(sent, sent.join("\n")).toHaveLength(1);
    expect(sent[0]).toMatch(/^issuing SELECT (public\.)?fairway_\w+\(/);
    return rows;
  } finally {
    await client.end({ timeout: 5 });
  }
}

/** A database of its own on `cluster` with Fairway's tables in the distributed layout. */
export async function distributedStore(cluster: CitusCluster, name: string): Promise<Store> {
  const store = connectPostgres(await cluster.createDatabase(name));
  await migrate(store, { distribute: true });
  return store;
}
