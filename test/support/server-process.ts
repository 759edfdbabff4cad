// Runs the real server (`apps/server/src/main.ts`) as a child process, as `npm start` would.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsx = join(root, "node_modules/.bin/tsx");

export interface ServerProcess {
  url: string;
  adminToken: string;
  dataDir: string;
  child: ChildProcess;
  output(): string;
  /** Send a signal and wait for exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "fairway-e2e-"));
  const adminToken = `fwadmin_test_${Math.random().toString(36).slice(2)}${Date.now()}`;
  const child = spawn(tsx, ["apps/server/src/main.ts"], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      FAIRWAY_DATA_DIR: dataDir,
      FAIRWAY_ADMIN_TOKEN: adminToken,
      FAIRWAY_ALLOW_PRIVATE_TARGETS: "true",
      FAIRWAY_LOG_LEVEL: "warn",
      PORT: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    const check = () => {
      const m = /Listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stderr!.on("data", check);
    child.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  return {
    url,
    adminToken,
    dataDir,
    child,
    output: () => out,
    stop(signal = "SIGTERM") {
      return new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once("exit", (code) => {
          rmSync(dataDir, { recursive: true, force: true });
          resolve(code);
        });
        child.kill(signal);
      });
    },
  };
}
