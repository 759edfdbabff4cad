// Is a process still alive, and is it the one a pid file meant? A pid outlives its process: after a
// reboot or a long time the number may belong to something else, so a pid file also records what it
// can check again (the process's start time on Linux, its command line everywhere).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user (postgres runs as `postgres` when we are root).
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Start time of a process in clock ticks since boot (Linux), or null where /proc is absent. */
export function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** A process's command line, or "" if it is gone. */
export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    try {
      return execFileSync("ps", ["-o", "args=", "-p", String(pid)], { encoding: "utf8" }).trim();
    } catch {
      return "";
    }
  }
}

/** Wait until `pid` has exited, polling; false if it is still alive after `ms`. */
export async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}
