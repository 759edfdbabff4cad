// CPU accounting from /proc for the design studies (Linux only): what each process, and the machine as
// a whole, spent over a measured window. Clock ticks are 10 ms (USER_HZ 100), so windows of a few
// seconds are needed for a figure per delivery to mean anything.
import { readdirSync, readFileSync } from "node:fs";

const US_PER_TICK = 10_000;

/** utime + stime of one process's /proc stat line, in µs. */
function statCpuUs(stat: string): number {
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * US_PER_TICK;
}

/** CPU µs used so far by one process (all its threads). */
export function processCpuUs(pid: number): number {
  return statCpuUs(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

/** CPU µs used so far by every postgres process on the machine (backends and background workers alike:
 *  run studies on an otherwise quiet machine). */
export function postgresCpuUs(): number {
  let us = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).startsWith("postgres")) us += statCpuUs(stat);
    } catch {
      // the process ended while we looked
    }
  }
  return us;
}

/** The machine's CPU time so far, busy and in all (every core), in clock ticks: busy cores over a window
 *  are Δbusy ÷ Δtotal × the number of cores. */
export function machineTicks(): { busy: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total }; // idle and iowait are not busy
}
