// Postgres-side processes a production drill starts itself: PgBouncer (Debian's, transaction mode, its
// defaults otherwise) and extra PostgreSQL 15 clusters, on free loopback ports, in temporary
// directories, stopped and removed by stop(). Both refuse to run as root: as root they run as `postgres`.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { until } from "../../support/until.ts";

export const PG_BIN = "/usr/lib/postgresql/15/bin";
const PGBOUNCER = "/usr/sbin/pgbouncer";

export const havePgBouncer = existsSync(PGBOUNCER);

/** uid/gid to run as: `postgres` when we are root, else ourselves. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/** A temporary directory the run-as user owns. */
export function ownedTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const { uid, gid } = runAs();
  if (uid !== undefined) chownSync(dir, uid, gid!);
  chmodSync(dir, 0o700);
  return dir;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Run a PostgreSQL binary as the run-as user; its output on failure. */
export function pgTool(tool: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync(join(PG_BIN, tool), args, {
    ...runAs(),
    cwd: tmpdir(),
    encoding: "utf8",
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function spawnAs(cmd: string, args: string[], logFile: string): ChildProcess {
  const child = spawn(cmd, args, { ...runAs(), cwd: tmpdir(), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  child.on("exit", () => {
    try {
      writeFileSync(logFile, out);
    } catch {
      // the directory may be gone already
    }
  });
  (child as ChildProcess & { output(): string }).output = () => out;
  return child;
}

export interface PgBouncer {
  port: number;
  /** A URL through the pooler to `database` on the upstream. */
  url(database: string): string;
  stop(): Promise<void>;
}

/** PgBouncer in transaction mode in front of 127.0.0.1:`upstreamPort`, every database, trust auth; every
 *  other setting its default (pool size 20, 100 clients, no ignored startup parameters). */
export async function startPgBouncer(upstreamPort = 5432): Promise<PgBouncer> {
  const dir = ownedTempDir("fairway-pgbouncer-");
  const port = await freePort();
  const { uid, gid } = runAs();
  const files: Record<string, string> = {
    "users.txt": `"postgres" ""\n`,
    "pgbouncer.ini": [
      "[databases]",
      `* = host=127.0.0.1 port=${upstreamPort}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      "pool_mode = transaction",
      "",
    ].join("\n"),
  };
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text);
    if (uid !== undefined) chownSync(join(dir, name), uid, gid!);
  }
  const child = spawnAs(PGBOUNCER, [join(dir, "pgbouncer.ini")], join(tmpdir(), `fairway-pgbouncer-${port}.log`));
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  await until(
    () =>
      new Promise<boolean>((resolve) => {
        if (child.exitCode !== null)
          throw new Error(`pgbouncer exited: ${(child as never as { output(): string }).output()}`);
        const s = createServer();
        s.once("error", () => resolve(true)); // taken: pgbouncer listens
        s.listen(port, "127.0.0.1", () => s.close(() => resolve(false)));
      }),
    (listening) => listening,
    10_000,
    "pgbouncer listening",
  );
  return {
    port,
    url,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGINT");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Cluster {
  port: number;
  dataDir: string;
  /** postgres://postgres@127.0.0.1:port/database */
  url(database: string): string;
  /** kill -9 the postmaster and every process it started, as a crashed machine would leave it. */
  kill9(): void;
  promote(): void;
  /** `pg_ctl restart` in `mode`; returns once the server accepts connections again. */
  restart(mode: "fast" | "immediate"): void;
  /** `pg_ctl start` after a stop(); returns once it accepts connections. */
  start(): void;
  stop(): void;
}

function cluster(dataDir: string, port: number, logFile: string): Cluster {
  const start = () => pgTool("pg_ctl", ["-D", dataDir, "-l", logFile, "-w", "-t", "60", "-o", `-p ${port}`, "start"]);
  start();
  return {
    start,
    port,
    dataDir,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    kill9() {
      const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
        .split("\n")
        .map((l) => Number(l.trim()))
        .filter((p) => p > 0);
      for (const p of [pid, ...children]) {
        try {
          process.kill(p, "SIGKILL");
        } catch {
          // already gone
        }
      }
    },
    promote() {
      pgTool("pg_ctl", ["-D", dataDir, "-w", "-t", "60", "promote"]);
    },
    restart(mode) {
      pgTool("pg_ctl", ["-D", dataDir, "-l", logFile, "-m", mode, "-w", "-t", "60", "-o", `-p ${port}`, "restart"]);
    },
    stop() {
      try {
        pgTool("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      } catch {
        // not running (killed)
      }
    },
  };
}

/** One PostgreSQL 15 cluster in `dir` (owned by the run-as user) on a free loopback port; fsync off. */
export async function startCluster(dir: string, settings: string[] = []): Promise<Cluster> {
  const port = await freePort();
  const dataDir = join(dir, "data");
  pgTool("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync"]);
  appendFileSync(
    join(dataDir, "postgresql.conf"),
    [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "fsync = off",
      "shared_buffers = 32MB",
      ...settings,
      "",
    ].join("\n"),
  );
  return cluster(dataDir, port, join(dir, "postgres.log"));
}

/** A primary and a synchronous streaming standby (pg_basebackup -R) in `dir` (owned by the run-as
 *  user), on two free loopback ports. fsync is off: a kill -9 of Postgres leaves the OS's page cache,
 *  and what is asserted is replication, not the disk. */
export async function startReplicatedPair(dir: string): Promise<{ primary: Cluster; standby: Cluster }> {
  const [p1, p2] = [await freePort(), await freePort()];
  const primaryDir = join(dir, "primary");
  const standbyDir = join(dir, "standby");
  pgTool("initdb", ["-D", primaryDir, "-U", "postgres", "--auth=trust", "--no-sync"]);
  appendFileSync(
    join(primaryDir, "postgresql.conf"),
    [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "synchronous_standby_names = '*'",
      "fsync = off",
      "shared_buffers = 32MB",
      "wal_keep_size = '256MB'",
      "",
    ].join("\n"),
  );
  const primary = cluster(primaryDir, p1, join(dir, "primary.log"));
  pgTool("pg_basebackup", [
    "-h",
    "127.0.0.1",
    "-p",
    String(p1),
    "-U",
    "postgres",
    "-D",
    standbyDir,
    "-R",
    "-X",
    "stream",
    "-c",
    "fast",
  ]);
  // Promoted, the standby must not wait for a standby of its own: every commit would hang.
  appendFileSync(join(standbyDir, "postgresql.conf"), "synchronous_standby_names = ''\n");
  const standby = cluster(standbyDir, p2, join(dir, "standby.log"));
  return { primary, standby };
}

/** One address in front of Postgres that the test re-points, as a managed service's DNS name (or
 *  virtual IP) moves to the promoted standby. Connections are relayed to the current target; a
 *  refused upstream closes the client's connection, as a dead host does. */
export async function startEndpoint(targetPort: number): Promise<{
  port: number;
  repoint(port: number): void;
  close(): Promise<void>;
}> {
  let target = targetPort;
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const server = createServer((client) => {
    track(client);
    const upstream = connect(target, "127.0.0.1");
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    port: (server.address() as { port: number }).port,
    repoint(port) {
      target = port;
      for (const s of sockets) s.destroy();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(() => r(null)));
    },
  };
}

/** Cleanups run after the file's tests, newest first, each whatever the others did: a drill registers
 *  each process, database and directory as it makes it, so a failure midway leaves nothing behind. */
export function useCleanups(): Array<() => unknown> {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse())
      await Promise.resolve()
        .then(c)
        .catch(() => {});
  });
  return cleanups;
}
