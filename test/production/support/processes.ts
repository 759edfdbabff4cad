// Postgres-side processes a production drill starts itself: PgBouncer (Debian's, transaction mode, its
// defaults otherwise) and extra PostgreSQL 15 clusters, on free loopback ports, in temporary
// directories, stopped and removed by stop(). Both refuse to run as root: as root they run as `postgres`.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
