// Design study: CPU per item of Fairway's own work, on a machine others are using too.
//
//   [N=20000] [KEYS=10000] npx tsx bench/src/studies/cpu-per-item.ts webhooks|throughput
//
// Runs the webhooks scenario's Fairway arm (signed deliveries to the scenario's target process) or the
// throughput scenario's (no-op handler), and over the timed window after a warm-up of N/4 reads the CPU
// of this process (the executor) and of the Postgres backends connected to it (found by their client
// ports), per item. Rates move with whatever else the machine runs; CPU per item moves much less, so
// alternated runs of two commits compare what their code costs. The figures say nothing of the target
// or of Postgres's background processes. One JSON line.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { nextMessage, spawnWorker, stopChild } from "../lib/children.ts";
import { benchDb } from "../lib/db.ts";
import { runExecutorUntil } from "../lib/fairway.ts";
import { keyTriggers, seedTenants, seedTriggers, setPool } from "../lib/seed.ts";
import { fairway as webhooksFairway } from "../scenarios/webhooks.ts";
import { sql } from "@fairway/store";

const tick = 10_000;
const cpuOf = (pid: number | string) => {
  const s = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * tick;
};
function myPorts(): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const l = readlinkSync(`/proc/self/fd/${fd}`);
      const m = /^socket:\[(\d+)\]$/.exec(l);
      if (m) inodes.add(m[1]);
    } catch {}
  }
  const ports = new Set<number>();
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 9 && inodes.has(f[9])) ports.add(parseInt(f[1].split(":")[1], 16));
  }
  return ports;
}
function backends(): number[] {
  const ports = myPorts();
  const out: number[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const m = /^postgres: .*127\.0\.0\.1\((\d+)\)/.exec(cmd);
      if (m && ports.has(Number(m[1]))) out.push(Number(pid));
    } catch {}
  }
  return out;
}
function meter() {
  let pids: number[] = [];
  let p0 = 0,
    s0 = 0,
    e = 0,
    pg = 0,
    wall = 0;
  return {
    window: {
      start() {
        pids = backends();
        p0 = pids.reduce((a, p) => a + cpuOf(p), 0);
        const u = process.cpuUsage();
        s0 = u.user + u.system;
        wall = performance.now();
      },
      end() {
        pg =
          pids.reduce((a, p) => {
            try {
              return a + cpuOf(p);
            } catch {
              return a;
            }
          }, 0) - p0;
        const late = backends().filter((p) => !pids.includes(p));
        pg += late.reduce((a, p) => a + cpuOf(p), 0);
        pids = pids.concat(late);
        const u = process.cpuUsage();
        e = u.user + u.system - s0;
        wall = performance.now() - wall;
      },
    },
    result: (n: number) => ({
      exec_us: e / n,
      pg_us: pg / n,
      all_us: (e + pg) / n,
      backends: pids.length,
      per_s: (n / wall) * 1000,
    }),
  };
}

const arm = process.argv[2];
const N = Number(process.env.N ?? 20000);
if (arm === "webhooks") {
  const target = spawnWorker("target.ts");
  try {
    const { port } = await nextMessage<{ kind: string; port: number }>(target, (m) => m.kind === "listening");
    const m = meter();
    await webhooksFairway(`http://127.0.0.1:${port}/hook`, N, N / 4, m.window);
    console.log(JSON.stringify({ arm, ...m.result(N) }));
  } finally {
    await stopChild(target);
  }
} else {
  const tdb = await benchDb(10);
  try {
    const db = tdb.store.db;
    const tenants = await seedTenants(db, { prefix: "t", count: 100, maxInFlight: 100_000 }, "noop");
    await setPool(db, "noop", 1000);
    await seedTriggers(db, tenants, (N + N / 4) / 100, "noop");
    // Throughput with fairness keys (KEYS over the 100 tenants), to set beside a run without.
    if (Number(process.env.KEYS ?? 0) > 0) await keyTriggers(db, Number(process.env.KEYS) / 100);
    await db.execute(sql`VACUUM ANALYZE`);
    const m = meter();
    await runExecutorUntil({
      db,
      handlers: { noop: async () => {} },
      settled: N + N / 4,
      warm: N / 4,
      window: m.window,
      timeoutMs: 300_000,
    });
    console.log(JSON.stringify({ arm, ...m.result(N) }));
  } finally {
    await tdb.drop();
  }
}
process.exit(0);
