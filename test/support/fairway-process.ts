// The real server (`apps/server/src/main.ts`) as a child process on a data directory the test owns, run
// as `node --import tsx` so the child's pid is the server itself: a kill -9 of it is a kill -9 of
// Fairway, with no wrapper left behind to hold anything open.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

export interface FairwayProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<number | null>;
  /** Send a signal and wait for the exit code (null: killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawn the server without waiting for it: its output as it comes, and its exit. */
export function spawnFairway(env: Record<string, string>): {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, ["--import", "tsx", "apps/server/src/main.ts"], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      FAIRWAY_LOG_LEVEL: "warn",
      PORT: "0",
      FAIRWAY_ALLOW_PRIVATE_TARGETS: "true",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, output: () => out, exited };
}

/** Start and wait until it listens (or, for an executor, until it has started). */
export async function startFairway(
  env: Record<string, string>,
  ready = /Listening on (http:\/\/\S+)/,
): Promise<FairwayProcess> {
  const p = spawnFairway(env);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${p.output()}`)), 60_000);
    p.child.stderr!.on("data", () => {
      const m = ready.exec(p.output());
      if (m) {
        clearTimeout(timer);
        resolve(m[1] ?? "");
      }
    });
    void p.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${p.output()}`));
    });
  });
  return {
    ...p,
    url,
    async stop(signal = "SIGTERM") {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
      return p.exited;
    },
  };
}

/** Run a start that is expected to fail: its exit code and everything it printed. */
export async function runToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const p = spawnFairway(env);
  const timer = setTimeout(() => p.child.kill("SIGKILL"), 60_000);
  const code = await p.exited;
  clearTimeout(timer);
  return { code, output: p.output() };
}

/** Pids of processes (postgres, its watcher) running on the embedded cluster of `dataDir`. */
export function postgresOn(dataDir: string): number[] {
  const ps = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return ps
    .split("\n")
    .filter((l) => l.includes(`-D ${dataDir}/postgres `))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}
