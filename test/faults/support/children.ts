// Spawns executor-child.ts processes and keeps a handle on each: its JSON-line events, a way to
// signal it, and its exit. Every child a test starts must end in that test's cleanup (killAll).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const script = fileURLToPath(new URL("./executor-child.ts", import.meta.url));

interface ChildEvent {
  event?: string;
  msg?: string;
  stats?: { claimed: number; settled: number; released: number; reaped: number; loopErrors: number };
  [k: string]: unknown;
}

export interface ExecutorChild {
  child: ChildProcess;
  owner: string;
  events: ChildEvent[];
  exited: Promise<number | null>;
  stderr(): string;
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM and wait for the "stopped" report. */
  stop(): Promise<ChildEvent["stats"]>;
}

const live = new Set<ChildProcess>();

export async function startExecutorChild(env: {
  DATABASE_URL: string;
  OWNER: string;
  POLL_MS?: string;
  REAP_MS?: string;
  GRACE_MS?: string;
  DB_POOL?: string;
  SETTLE_LINGER_MS?: string;
  REDIS_URL?: string;
  REDIS_PREFIX?: string;
  HEARTBEAT_MS?: string;
  HEARTBEAT_TIMEOUT_MS?: string;
}): Promise<ExecutorChild> {
  // `node --import tsx`, not the tsx CLI: the CLI runs the script in a grandchild, and SIGKILL/SIGSTOP
  // cannot be relayed — the drill would hit the wrapper and leave the executor running.
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  const events: ChildEvent[] = [];
  let stderr = "";
  let buf = "";
  child.stdout!.on("data", (d) => {
    buf += d;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        events.push(JSON.parse(line));
      } catch {
        events.push({ msg: line });
      }
    }
  });
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((res) =>
    child.on("exit", (code) => {
      live.delete(child);
      res(code);
    }),
  );
  const end = Date.now() + 30_000;
  while (!events.some((e) => e.event === "ready")) {
    if (child.exitCode !== null || Date.now() > end) throw new Error(`executor child did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    child,
    owner: env.OWNER,
    events,
    exited,
    stderr: () => stderr,
    signal: (sig) => void child.kill(sig),
    async stop() {
      child.kill("SIGTERM");
      await exited;
      return events.find((e) => e.event === "stopped")?.stats;
    },
  };
}

/** Test cleanup: SIGKILL any child still alive (SIGCONT first, a stopped process ignores nothing but waits). */
export async function killAll(): Promise<void> {
  const waiting = [...live].map((c) => new Promise((res) => c.once("exit", res)));
  for (const c of live) {
    c.kill("SIGCONT");
    c.kill("SIGKILL");
  }
  await Promise.all(waiting);
}
