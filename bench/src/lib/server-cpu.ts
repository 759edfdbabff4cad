// CPU time a PostgreSQL server has used, read from /proc: its postmaster's own and reaped children's
// time, plus every live child's (the backends, WAL writer, checkpointer...). Sampled around a timed
// window, it gives the server's CPU per item: what the capacity model in docs/scaling.md is built on.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** utime, stime, cutime, cstime of a process, in ticks; null if it has gone. */
function times(pid: number): { ppid: number; own: number; children: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces: fields start after its closing parenthesis.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

/** Seconds of CPU the server whose data directory is `dataDir` has used since it started. */
export function serverCpuSeconds(dataDir: string): number {
  const postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  const root = times(postmaster);
  if (!root) throw new Error(`no PostgreSQL server running in ${dataDir}`);
  let ticks = root.own + root.children;
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === postmaster) continue;
    const t = times(pid);
    if (t?.ppid === postmaster) ticks += t.own;
  }
  return ticks / TICKS_PER_SECOND;
}
