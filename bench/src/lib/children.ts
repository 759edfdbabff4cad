// Spawning bench worker processes (executors, the webhook target, the API server) with tsx, and
// stopping them — each child is ended by its own handle, never by name.
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export function spawnWorker(file: string, env: Record<string, string> = {}): ChildProcess {
  const path = fileURLToPath(new URL(`../workers/${file}`, import.meta.url));
  return fork(path, [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/** The first IPC message matching `pred`. */
export function nextMessage<T>(child: ChildProcess, pred: (m: T) => boolean, timeoutMs = 60_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`child ${child.pid}: no message within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onMessage = (m: unknown) => {
      if (!pred(m as T)) return;
      clearTimeout(timer);
      child.off("message", onMessage);
      resolve(m as T);
    };
    child.on("message", onMessage);
    child.once("exit", (code) => reject(new Error(`child ${child.pid} exited (${code})`)));
  });
}

/** Ask a child to stop ("stop" message), wait for it to exit; kill it if it does not. */
export async function stopChild(child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.send("stop");
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  await exited;
  clearTimeout(timer);
}
