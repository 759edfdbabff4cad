// Connection factory. The store speaks drizzle over postgres.js, on Node (the embedded PostgreSQL or
// DATABASE_URL) and on Workers (through Hyperdrive): one engine, so every statement in ./sql runs on
// the same Postgres everywhere.
import { sql, type SQL } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { guardClient, type DatabaseDeadlineError } from "./guarded-client.ts";
import type { LayoutName } from "./layout/name.ts";
import * as schema from "./schema.ts";

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Store {
  readonly kind: "postgres";
  readonly db: Db;
  /** How many times a statement went unanswered past the deadline and the pool was replaced. */
  poolReplacements(): number;
  close(): Promise<void>;
}

/** Rows of a raw `db.execute()` (postgres.js answers with an array; other drivers with `{ rows }`). */
function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/** Run a raw statement and return its rows. On postgres.js it runs as a prepared statement (drizzle's
 *  `execute` never prepares, and parsing and planning the claim and settle each time costs more than
 *  running them — docs/decisions/0001-prepared-statements.md). A store
 *  connected with `prepare: false` (PgBouncer, Hyperdrive) still wins: postgres.js ANDs the two.
 *  A client without `unsafe` goes through drizzle unchanged. */
export async function query<T = Record<string, unknown>>(db: Db, statement: SQL): Promise<T[]> {
  const internals = db as unknown as DrizzleInternals;
  const client = internals.session?.client;
  if (client && typeof client.unsafe === "function" && internals.dialect) {
    const q = internals.dialect.sqlToQuery(statement);
    return (await client.unsafe(q.sql, q.params, { prepare: true })) as T[];
  }
  return rowsOf<T>(await db.execute(statement));
}

/** Run `statements` as one transaction and return each one's rows. On postgres.js the whole transaction
 *  is one round trip: BEGIN, the statements and COMMIT are written at once on a reserved connection. A
 *  statement cannot use an earlier one's rows, but can read what it left in transaction-local settings
 *  (`set_config(…, true)`); each still runs with its own snapshot. If a statement fails, Postgres
 *  rejects the rest of the transaction and the COMMIT rolls it back; the first error is thrown.
 *
 *  sql.begin() would take three round trips (BEGIN; the statements; COMMIT), each waiting for Node to
 *  get back to the socket while it runs other work (docs/decisions/0002-one-round-trip-transactions.md).
 *
 *  A connection that dies mid-pipeline: postgres.js rejects what it sent, but statements it was still
 *  holding client-side (behind one being described, on its first use on the connection) are never heard
 *  of again. So the call also ends with the connection's close, as sql.begin() does, and a closed
 *  connection is not released: released, it would go back to the pool as open
 *  (packages/store/test/pipeline.pg.test.ts). A caller already inside a transaction runs them one by
 *  one. */
export async function pipelineTx(db: Db, statements: SQL[]): Promise<unknown[][]> {
  const [only] = await pipelineTxs(db, [statements]);
  if (only!.status === "rejected") throw only!.reason;
  return only!.value;
}

/** Several transactions in one round trip: BEGIN, a group's statements, COMMIT, then the next group's,
 *  written at once on one reserved connection. Each group commits or rolls back on its own (a failed
 *  statement aborts its group only) and settles as its own result, in order. Used where one
 *  transaction would take ledger locks in two passes (store hand-off.ts, "Lock order"). A connection
 *  lost mid-way fails every group whose answer had not come. */
export async function pipelineTxs(db: Db, groups: SQL[][]): Promise<Array<PromiseSettledResult<unknown[][]>>> {
  const internals = db as unknown as DrizzleInternals;
  const client = internals.session?.client;
  // A transaction's client (it has savepoint) must keep its statements in its own transaction.
  if (client && typeof client.reserve === "function" && !("savepoint" in client) && internals.dialect) {
    return pipelineReserved(
      await client.reserve(),
      groups.map((g) => g.map((s) => internals.dialect!.sqlToQuery(s))),
    );
  }
  const out: Array<PromiseSettledResult<unknown[][]>> = [];
  for (const g of groups) {
    const one = async (tx: Db) => {
      const rows: unknown[][] = [];
      for (const s of g) rows.push(await query(tx, s));
      return rows;
    };
    // Inside a caller's transaction the groups are its own: one by one, failing as one.
    out.push(
      await ("savepoint" in (client ?? {}) ? one(db) : db.transaction(one)).then(
        (value) => ({ status: "fulfilled" as const, value }),
        (reason: unknown) => ({ status: "rejected" as const, reason }),
      ),
    );
  }
  return out;
}

/** The text of a delegated function's call (sql/delegated.ts claimCall, settleCall). */
const DELEGATED_CALL = /^SELECT fairway_(claim|settle)\(/;

async function pipelineReserved(
  conn: ReservedSql,
  groups: Array<Array<{ sql: string; params: unknown[] }>>,
): Promise<Array<PromiseSettledResult<unknown[][]>>> {
  let closed: (err: unknown) => void = () => {};
  const whenClosed = new Promise<never>((_, reject) => (closed = reject));
  whenClosed.catch(() => {}); // raced below, and never settled when all goes well
  let connection: PgConnection | null = null;
  let isClosed = false;
  // The connection, handed over when postgres.js writes a statement: its close fails the call at once.
  const onexecute = (c: PgConnection) => {
    connection = c;
    c.onclose = (err) => {
      isClosed = true;
      closed(err);
    };
    return true;
  };
  // Every statement offers the hook: postgres.js calls it only for a statement it could write at once
  // (not one behind a full socket buffer), and one is enough.
  // A call of a function distributed by its tenant (sql/delegated.ts) is sent alone, its own
  // transaction: Citus sends it whole to the tenant's node only outside a transaction block. Every
  // other group is written as BEGIN, its statements, COMMIT.
  const sent = groups.map((queries) =>
    queries.length === 1 && DELEGATED_CALL.test(queries[0]!.sql)
      ? [conn.unsafe(queries[0]!.sql, queries[0]!.params, { prepare: true, onexecute })]
      : [
          conn.unsafe("begin", [], { prepare: false, onexecute }),
          ...queries.map((q) => conn.unsafe(q.sql, q.params, { prepare: true, onexecute })),
          conn.unsafe("commit", [], { prepare: false, onexecute }),
        ],
  );
  // postgres.js queries are lazy: started here, in order, so they are written in order.
  for (const q of sent.flat()) (q as unknown as { execute(): unknown }).execute();
  try {
    return await Promise.race([
      Promise.all(
        sent.map(async (pending) => {
          const out = await Promise.allSettled(pending);
          const failed = out.find((r) => r.status === "rejected");
          if (failed) return failed as PromiseRejectedResult;
          const value = (out.length === 1 ? out : out.slice(1, -1)).map(
            (r) => (r as PromiseFulfilledResult<unknown[]>).value,
          );
          return { status: "fulfilled" as const, value };
        }),
      ),
      whenClosed,
    ]);
  } finally {
    if (connection) (connection as PgConnection).onclose = null;
    if (!isClosed) conn.release();
  }
}

type UnsafeFn = (
  q: string,
  p: unknown[],
  o: { prepare: boolean; onexecute?: (c: PgConnection) => boolean },
) => Promise<unknown[]>;

/** What pipelineReserved() touches of a postgres.js connection: the pool calls `onclose` when it closes. */
interface PgConnection {
  onclose: ((err: unknown) => void) | null;
}

/** A postgres.js connection reserved from its pool (sql.reserve()). */
interface ReservedSql {
  unsafe: UnsafeFn;
  release(): void;
}

/** The parts of drizzle's database/transaction objects query() relies on (stable across 0.3x-0.4x). */
interface DrizzleInternals {
  dialect?: { sqlToQuery(s: SQL): { sql: string; params: unknown[] } };
  session?: {
    client?: { unsafe?: UnsafeFn; reserve?: () => Promise<ReservedSql> } & object;
  };
}

/** A json column of a raw query: parsed by the driver, or handed over as text; either way an object. */
export function jsonColumn<T>(v: T | string): T {
  return typeof v === "string" ? (JSON.parse(v) as T) : v;
}

/** drizzle hands timestamps to raw queries as text: turn the named fields into Dates. */
export function withDates<T, K extends keyof T>(rows: T[], ...keys: K[]): T[] {
  for (const row of rows) {
    for (const k of keys) {
      const v = row[k] as unknown;
      if (v != null && !(v instanceof Date)) (row as Record<K, unknown>)[k] = new Date(v as string);
    }
  }
  return rows;
}

export interface PostgresOptions {
  /** Pool size. Default 10. */
  max?: number;
  /** Hyperdrive and transaction poolers without named prepared statements (PgBouncer before 1.21)
   *  need prepare: false. Default true. */
  prepare?: boolean;
  /** Called with every statement sent (postgres.js `debug`): tests read what a call sends. */
  debug?: (connection: number, query: string, parameters: unknown[]) => void;
  /** A statement or transaction with neither an answer nor an error after this long is failed and the
   *  pool replaced (guarded-client.ts). 0: no deadline (the migrator's long DDL). Default 30 000 ms. */
  deadlineMs?: number;
  /** Told when that happens (the server logs it). */
  onDeadline?: (err: DatabaseDeadlineError) => void;
  /** The layout, fixed instead of read from the catalog on first use (layout/index.ts): tests run
   *  the per-tenant layout's statements on plain PostgreSQL. Default: read. */
  layout?: LayoutName;
}

/** The URL as postgres.js must be given it. Its `target_session_attrs=read-write` check reads only
 *  `default_transaction_read_only`, which a hot standby reports as off, so it would settle on a standby
 *  of a failover pair; `primary` checks `in_hot_standby`, which is what read-write means there. */
export function driverUrl(url: string): string {
  return url.replace(/([?&]target_session_attrs=)read-write(?=&|$)/, "$1primary");
}

/** Layouts fixed at connect (PostgresOptions.layout), read by layout/detect.ts. */
const forced = new WeakMap<object, LayoutName>();

export function forcedLayout(db: Db): LayoutName | undefined {
  return forced.get(db);
}

export function connectPostgres(url: string, opts: PostgresOptions = {}): Store {
  const make = () =>
    postgres(driverUrl(url), {
      max: opts.max ?? 10,
      prepare: opts.prepare ?? true,
      onnotice: () => {},
      // No startup parameters: transaction poolers (PgBouncer, Supavisor, RDS Proxy) refuse or pin a
      // connection for them. The planner settings Fairway relies on are the role's defaults in its
      // database, set by migrate() (packages/store/src/node.ts, docs/decisions/0003-planner-settings.md).
      // bigint counts as numbers.
      types: { bigint: postgres.BigInt },
      // Reconnect quickly after an outage. postgres.js's default grows as 3^n/100 s up to 20 s, so a 3 s
      // outage could leave an executor offline for 20 s while its short leases expired and were re-run
      // (test/faults/postgres-outage). Jittered, capped at 2 s: a restarted server is not stormed.
      backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, 2),
      connect_timeout: 10,
      ...(opts.debug ? { debug: opts.debug } : {}),
    });
  const guarded = guardClient(make, { deadlineMs: opts.deadlineMs ?? 30_000, onReplaced: opts.onDeadline });
  const db = drizzlePostgres(guarded.client, { schema }) as Db;
  if (opts.layout) forced.set(db, opts.layout);
  return {
    kind: "postgres",
    db,
    poolReplacements: guarded.replaced,
    close: () => guarded.end({ timeout: 5 }),
  };
}

export { sql };
