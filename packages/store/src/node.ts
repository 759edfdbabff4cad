// Node-only entry: the migrator (it reads the migrations from the filesystem, so it stays out of the
// Worker bundle).
//
// It applies drizzle-kit's migrations (drizzle/, its journal and hashes, recorded in drizzle-orm's own
// table, so either migrator reads the other's bookkeeping) on one session of the direct connection:
// - an advisory lock serialises migrators (two servers of a rolling deploy start at once);
// - each migration runs with `lock_timeout`, so a DDL statement queued behind a running transaction
//   stalls the claims queued behind it for at most that long; on timeout it is rolled back and
//   retried after a pause, while executors and the API go on;
// - a migration whose first line is `-- fairway:no-transaction` runs statement by statement outside a
//   transaction (CREATE INDEX CONCURRENTLY cannot run inside one). Each statement must be safe to
//   re-run; an index build that failed leaves an invalid index, dropped before the retry;
// - when asked (`distribute`) on a Citus coordinator, the tables are distributed by tenant
//   (citus.ts, docs/scaling.md), again after every run: it does only what is left;
// - last, the planner defaults Fairway's statements rely on (docs/decisions/0003-planner-settings.md)
//   are set on Fairway's role in its database, where every connection gets them, a pooler's included.
//
// The lock and the session settings need a session of their own: through a transaction pooler they
// would land on a different backend per statement. So migrate on DATABASE_DIRECT_URL (docs/production.md).
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { distributeTables, hasDistributedLayout } from "./citus.ts";
import { driverUrl, type Store } from "./db.ts";

// From sources: the repository's drizzle/. In a bundled package (the CLI): the copy next to the bundle.
const bundledMigrations = fileURLToPath(new URL("./drizzle", import.meta.url));
export const migrationsFolder = existsSync(join(bundledMigrations, "meta"))
  ? bundledMigrations
  : fileURLToPath(new URL("../../../drizzle", import.meta.url));

/** Fairway's planner settings (docs/decisions/0003-planner-settings.md), as role-in-database defaults. */
const PLANNER_DEFAULTS: ReadonlyArray<readonly [string, string]> = [
  ["jit", "off"],
  ["enable_seqscan", "off"],
];

/** Any key; the same on every migrator. */
const MIGRATE_LOCK = 4_640_046_046;
const NO_TRANSACTION = /^--\s*fairway:no-transaction\b/;

export interface MigrateOptions {
  migrationsFolder?: string;
  /** How long one DDL statement may wait for its lock (and so stall what queues behind it). Default 1000 ms. */
  lockTimeoutMs?: number;
  /** Tries of a migration whose lock wait timed out. Default 60. */
  attempts?: number;
  /** One line per event worth an operator's attention (a retry, missing privileges). Default console.warn. */
  log?: (line: string) => void;
  /** On a Citus coordinator, distribute the tables by tenant after the migrations (citus.ts,
   *  docs/scaling.md). Ignored where the citus extension is absent. Default false. */
  distribute?: boolean;
}

interface Migration {
  tag: string;
  statements: string[];
  when: number;
  hash: string;
  transactional: boolean;
}

function readMigrations(folder: string): Migration[] {
  const journal = JSON.parse(readFileSync(join(folder, "meta/_journal.json"), "utf8")) as {
    entries: Array<{ tag: string; when: number }>;
  };
  return journal.entries.map((e) => {
    const text = readFileSync(join(folder, `${e.tag}.sql`), "utf8");
    return {
      tag: e.tag,
      // Split and hashed exactly as drizzle-orm's migrator does.
      statements: text.split("--> statement-breakpoint").filter((s) => s.trim() !== ""),
      when: e.when,
      hash: createHash("sha256").update(text).digest("hex"),
      transactional: !NO_TRANSACTION.test(text.trimStart()),
    };
  });
}

type Session = postgres.ReservedSql;

export async function migrate(store: Store, opts: MigrateOptions = {}): Promise<void> {
  const client = (store.db as unknown as { $client: postgres.Sql }).$client;
  const log = opts.log ?? ((line: string) => console.warn(line));
  const session = await client.reserve();
  try {
    await session.unsafe(`select pg_advisory_lock(${MIGRATE_LOCK})`);
    try {
      await session.unsafe(`SET lock_timeout = ${Math.max(1, opts.lockTimeoutMs ?? 1000)}`);
      await session.unsafe(`CREATE SCHEMA IF NOT EXISTS drizzle`);
      await session.unsafe(
        `CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
      );
      const [last] = await session.unsafe<Array<{ created_at: string | number }>>(
        `select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`,
      );
      const applied = last ? Number(last.created_at) : -1;
      for (const m of readMigrations(opts.migrationsFolder ?? migrationsFolder)) {
        if (m.when <= applied) continue;
        await withLockRetry(m.tag, opts.attempts ?? 60, log, () =>
          m.transactional ? applyInTransaction(session, m) : applyStatements(session, m),
        );
      }
      await session.unsafe(`RESET lock_timeout`);
      // Once distributed, every later migration is followed by the step again (it redoes only what a
      // migration undid: the queue's functions, a new table's distribution).
      if (opts.distribute || (await hasDistributedLayout(session))) {
        if (!(await distributeTables(session)))
          throw new Error("FAIRWAY_DISTRIBUTE needs a Citus coordinator: this database has no citus extension");
      }
      await setPlannerDefaults(session, log);
    } finally {
      await session.unsafe(`select pg_advisory_unlock(${MIGRATE_LOCK})`).catch(() => {});
    }
  } finally {
    session.release();
  }
}

async function applyInTransaction(session: Session, m: Migration): Promise<void> {
  await session.unsafe("begin");
  try {
    for (const s of m.statements) await session.unsafe(s);
    await record(session, m);
    await session.unsafe("commit");
  } catch (err) {
    await session.unsafe("rollback").catch(() => {});
    throw err;
  }
}

/** Outside a transaction: statements already run are skipped on a retry only if they are idempotent
 *  (IF NOT EXISTS); an invalid index left by a failed concurrent build is dropped first. */
async function applyStatements(session: Session, m: Migration): Promise<void> {
  for (const s of m.statements) {
    try {
      await session.unsafe(s);
    } catch (err) {
      const index = /CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?("[^"]+"|[\w.]+)/i.exec(s);
      if (index) await session.unsafe(`DROP INDEX CONCURRENTLY IF EXISTS ${index[1]}`).catch(() => {});
      throw err;
    }
  }
  await record(session, m);
}

async function record(session: Session, m: Migration): Promise<void> {
  await session.unsafe(`insert into drizzle.__drizzle_migrations ("hash", "created_at") values ($1, $2)`, [
    m.hash,
    m.when,
  ]);
}

async function withLockRetry(
  tag: string,
  attempts: number,
  log: (line: string) => void,
  fn: () => Promise<void>,
): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      // 55P03 lock_not_available: lock_timeout expired, nothing of this migration stays.
      if ((err as { code?: string }).code !== "55P03" || i >= attempts) throw err;
      log(`migration ${tag}: a running transaction holds a lock it needs; retrying (${i}/${attempts - 1})`);
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 800));
    }
  }
}

/** Set the planner defaults on the current role in the current database (new sessions get them), and on
 *  this session (the migrator's connection goes back to its pool). Ordinary roles may set their own. */
async function setPlannerDefaults(session: Session, log: (line: string) => void): Promise<void> {
  const [row] = await session.unsafe<Array<{ db: string; setconfig: string[] | null }>>(
    `select current_database() as db,
            (select setconfig from pg_db_role_setting s
              where s.setdatabase = (select oid from pg_database where datname = current_database())
                and s.setrole = (select oid from pg_roles where rolname = current_user)) as setconfig`,
  );
  const have = new Set(row?.setconfig ?? []);
  for (const [name, value] of PLANNER_DEFAULTS) {
    await session.unsafe(`SET ${name} = ${value}`);
    if (have.has(`${name}=${value}`)) continue;
    try {
      await session.unsafe(plannerDefaultStatement(row!.db, name, value));
    } catch (err) {
      log(
        `could not set Fairway's planner default ${name}=${value} (${(err as Error).message}); ` +
          `as an administrator run: ${plannerDefaultStatement(row!.db, name, value, "<fairway role>")}`,
      );
    }
  }
}

function plannerDefaultStatement(db: string, name: string, value: string, role = "CURRENT_USER"): string {
  return `ALTER ROLE ${role} IN DATABASE "${db.replaceAll('"', '""')}" SET ${name} = ${value}`;
}

/** The statements that give `database` Fairway's planner defaults for the current role (a database made
 *  from a template does not inherit its template's). */
export function plannerDefaultsFor(database: string): string[] {
  return PLANNER_DEFAULTS.map(([name, value]) => plannerDefaultStatement(database, name, value));
}

export interface DatabaseProbe {
  /** The connection changes backend between transactions: a transaction pooler (PgBouncer, Supavisor,
   *  RDS Proxy in transaction mode). A direct connection or a session pooler keeps its backend. */
  transactionPooler: boolean;
  /** The server is a standby (or the database is read-only): Fairway cannot write there. */
  readOnly: boolean;
}

/** Probe `url` with two connections of its own. Client A's backend is noted; client B opens a
 *  transaction, which a pooler serves from the server connection A just released (PgBouncer reuses the
 *  most recent first); A asks again. A direct connection always answers with the same backend, so
 *  `transactionPooler` is never true by mistake; a busy shared pooler may hide itself, so it is asked
 *  three times. Throws what connecting throws. */
export async function probeDatabase(url: string): Promise<DatabaseProbe> {
  const sql = postgres(driverUrl(url), {
    max: 2,
    prepare: false,
    onnotice: () => {},
    connect_timeout: 10,
    idle_timeout: 1,
  });
  try {
    const a = await sql.reserve();
    const b = await sql.reserve();
    try {
      let transactionPooler = false;
      for (let i = 0; i < 3 && !transactionPooler; i++) {
        const [first] = await a.unsafe<[{ pid: number }]>("select pg_backend_pid() as pid");
        await b.unsafe("begin");
        await b.unsafe("select pg_backend_pid()");
        const [second] = await a.unsafe<[{ pid: number }]>("select pg_backend_pid() as pid");
        await b.unsafe("rollback");
        transactionPooler = first!.pid !== second!.pid;
      }
      const [ro] = await a.unsafe<[{ ro: string; rec: boolean }]>(
        "select current_setting('transaction_read_only') as ro, pg_is_in_recovery() as rec",
      );
      return { transactionPooler, readOnly: ro!.ro === "on" || ro!.rec };
    } finally {
      a.release();
      b.release();
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
}
