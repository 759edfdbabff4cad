// A Citus cluster the tests start: a coordinator and workers, each a PostgreSQL 15 cluster with
// shared_preload_libraries = 'citus', on free loopback ports in a temporary directory, the workers
// added to the coordinator's metadata. One per test file; stop() ends the servers and removes the
// directory. Citus must be installed for PostgreSQL 15 (citus.so and its extension files): without it
// the suite fails with a message saying so, it never skips.
import { appendFileSync, existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { freePort, ownedTempDir, pgTool } from "../../production/support/processes.ts";

const CITUS_SO = "/usr/lib/postgresql/15/lib/citus.so";
const CITUS_CONTROL = "/usr/share/postgresql/15/extension/citus.control";

const haveCitus = existsSync(CITUS_SO) && existsSync(CITUS_CONTROL);

function requireCitus(): void {
  if (!haveCitus)
    throw new Error(
      "Citus is not installed for PostgreSQL 15 (no citus.so / citus.control): install the Citus 13 packages " +
        "for PostgreSQL 15 (CI installs them in .ci/run)",
    );
}

interface CitusNode {
  port: number;
  dataDir: string;
  /** pg_ctl stop -m immediate: a node that goes away without a goodbye. */
  stop(): void;
  start(): void;
}

export interface CitusCluster {
  coordinator: CitusNode;
  workers: CitusNode[];
  /** postgres://postgres@127.0.0.1:<coordinator>/postgres: the database every node has the extension in. */
  url: string;
  /** A second database with the extension on every node and the same nodes in its metadata (Citus
   *  keeps its node list per database); its URL on the coordinator. */
  createDatabase(name: string): Promise<string>;
  /** Drops a database createDatabase() made, on every node. */
  dropDatabase(name: string): Promise<void>;
  /** A new worker node, started and added to the metadata of every database (it holds no shards until
   *  a rebalance). */
  addWorker(): Promise<CitusNode>;
  /** Lines of the nodes' server logs that report a deadlock (PostgreSQL's `deadlock detected`, Citus's
   *  `distributed deadlock`), with the node's name. */
  deadlocks(): string[];
  /** Ends the servers and removes the directory; then fails if any node logged a deadlock (unless
   *  started with `allowDeadlocks`): the drills hold no lock cycle (docs/guarantees.md, "Lock order"). */
  stop(): Promise<void>;
}

const DEADLOCK = /deadlock detected|distributed deadlock/i;

/** The deadlock lines of the log files `names` (as startNode writes them) in `dir`. */
function deadlockLines(dir: string, names: string[]): string[] {
  const out: string[] = [];
  for (const name of names) {
    const log = join(dir, `${name}.log`);
    if (!existsSync(log)) continue;
    for (const line of readFileSync(log, "utf8").split("\n")) if (DEADLOCK.test(line)) out.push(`${name}: ${line}`);
  }
  return out;
}

const NODE_CONF = [
  "listen_addresses = '127.0.0.1'",
  // Shard moves (citus_rebalance_start) copy and catch up through logical replication.
  "wal_level = logical",
  "max_connections = 200",
  "max_prepared_transactions = 100",
  "",
].join("\n");

/** Tests: what they assert is distribution, not the disk (a node's crash is stop -m immediate, which
 *  keeps the OS's page cache), and 8 shards per table (Citus's default is 32) keep a rebalance short.
 *  A benchmark compares with a PostgreSQL that syncs. */
const FAST_CONF =
  "citus.shard_count = 8\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\n";
const DURABLE_CONF = "shared_buffers = 128MB\n";

async function startNode(dir: string, name: string, durable: boolean, citus = true): Promise<CitusNode> {
  const port = await freePort();
  const dataDir = join(dir, name);
  const log = join(dir, `${name}.log`);
  pgTool("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync"]);
  appendFileSync(
    join(dataDir, "postgresql.conf"),
    `${citus ? "shared_preload_libraries = 'citus'\n" : ""}${NODE_CONF}${durable ? DURABLE_CONF : FAST_CONF}unix_socket_directories = '${dir}'\nport = ${port}\n`,
  );
  const node: CitusNode = {
    port,
    dataDir,
    start: () => void pgTool("pg_ctl", ["-D", dataDir, "-l", log, "-w", "-t", "60", "start"]),
    stop() {
      try {
        pgTool("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      } catch {
        // not running
      }
    },
  };
  node.start();
  if (citus) await onNode(port, "CREATE EXTENSION IF NOT EXISTS citus");
  return node;
}

async function onNode<T extends object = Record<string, unknown>>(
  port: number,
  statement: string,
  database = "postgres",
): Promise<T[]> {
  const sql = postgres(`postgres://postgres@127.0.0.1:${port}/${database}`, { max: 1, onnotice: () => {} });
  try {
    return (await sql.unsafe(statement)) as unknown as T[];
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** A coordinator and `workers` workers (default 2; `durable`: fsync and synchronous commit on, as
 *  the machine's PostgreSQL), the coordinator registered by its loopback address
 *  (workers reach it, as they do each other, for distributed transactions' recovery). */
export async function startCitusCluster(
  workers = 2,
  opts: { durable?: boolean; allowDeadlocks?: boolean } = {},
): Promise<CitusCluster> {
  requireCitus();
  const dir = ownedTempDir("fairway-citus-");
  const nodes: CitusNode[] = [];
  const names = () => ["coordinator", ...nodes.slice(1).map((_, i) => `worker${i + 1}`)];
  const stopAll = () => {
    for (const n of nodes.reverse()) n.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const coordinator = await startNode(dir, "coordinator", opts.durable ?? false);
    nodes.push(coordinator);
    await onNode(coordinator.port, `SELECT citus_set_coordinator_host('127.0.0.1', ${coordinator.port})`);
    // Databases made by createDatabase(): a worker added later joins each of them too.
    const databases: string[] = [];
    const addWorker = async () => {
      const w = await startNode(dir, `worker${nodes.length}`, opts.durable ?? false);
      nodes.push(w);
      await onNode(coordinator.port, `SELECT citus_add_node('127.0.0.1', ${w.port})`);
      for (const name of databases) {
        await onNode(w.port, `CREATE DATABASE "${name}"`);
        await onNode(w.port, "CREATE EXTENSION citus", name);
        await onNode(coordinator.port, `SELECT citus_add_node('127.0.0.1', ${w.port})`, name);
      }
      return w;
    };
    const ws: CitusNode[] = [];
    for (let i = 0; i < workers; i++) ws.push(await addWorker());
    return {
      coordinator,
      workers: ws,
      url: `postgres://postgres@127.0.0.1:${coordinator.port}/postgres`,
      async createDatabase(name) {
        for (const n of [coordinator, ...ws]) {
          await onNode(n.port, `CREATE DATABASE "${name}"`);
          await onNode(n.port, "CREATE EXTENSION citus", name);
        }
        await onNode(coordinator.port, `SELECT citus_set_coordinator_host('127.0.0.1', ${coordinator.port})`, name);
        for (const w of ws) await onNode(coordinator.port, `SELECT citus_add_node('127.0.0.1', ${w.port})`, name);
        databases.push(name);
        return `postgres://postgres@127.0.0.1:${coordinator.port}/${name}`;
      },
      async dropDatabase(name) {
        for (const n of [coordinator, ...ws]) await onNode(n.port, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        databases.splice(databases.indexOf(name), 1);
      },
      async addWorker() {
        const w = await addWorker();
        ws.push(w);
        return w;
      },
      deadlocks: () => deadlockLines(dir, names()),
      async stop() {
        const found = deadlockLines(dir, names());
        stopAll();
        if (found.length > 0 && !opts.allowDeadlocks)
          throw new Error(`the cluster's nodes logged ${found.length} deadlock(s):\n${found.join("\n")}`);
      },
    };
  } catch (err) {
    stopAll();
    throw err;
  }
}

/** The same server as a durable coordinator, without Citus: what a benchmark compares one with. */
export async function startPlainServer(): Promise<Pick<CitusCluster, "createDatabase" | "stop"> & { dataDir: string }> {
  const dir = ownedTempDir("fairway-plain-");
  try {
    const node = await startNode(dir, "plain", true, false);
    return {
      dataDir: node.dataDir,
      async createDatabase(name) {
        await onNode(node.port, `CREATE DATABASE "${name}"`);
        return `postgres://postgres@127.0.0.1:${node.port}/${name}`;
      },
      async stop() {
        node.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
