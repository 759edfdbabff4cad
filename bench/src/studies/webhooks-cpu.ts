// Design study: where the webhooks scenario's time goes. Not part of
// `npm run bench`; run it by hand, on an otherwise quiet machine:
//
//   [PAIRS=3] [N=40000] [TLS=1] [ARMS=bare,fairway,raw] npx tsx bench/src/studies/webhooks-cpu.ts
//
// The scenario's two main arms, alternated (round k starts k places further along the list): the
// bare keep-alive undici.request loop and Fairway's executor, both in this process, both against the
// scenario's target process, each timed after a warm-up of N/4 of its own. Over the timed window it
// reads, per delivery: this process's CPU (the client or the executor, with its Postgres client), the
// target's, every postgres process's; the machine's busy cores; this process's event-loop utilisation
// and delay; its minor GC pauses. One JSON line per run, then the medians. ARMS adds the scenario's raw
// durable delivery (the raw SKIP LOCKED queue feeding signed requests through Fairway's transport).
//
// TLS=1 runs both arms against an HTTPS target instead, as real webhook endpoints are: a self-signed
// certificate for 127.0.0.1 is made with the openssl CLI, and the study runs itself again with it
// trusted (NODE_EXTRA_CA_CERTS, read only when a process starts, names it in place of any other).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, PerformanceObserver, performance } from "node:perf_hooks";
import { nextMessage, spawnWorker, stopChild } from "../lib/children.ts";
import { machineTicks, postgresCpuUs, processCpuUs } from "../lib/proc.ts";
import type { TimedWindow } from "../lib/scenario.ts";
import { percentile } from "../lib/stats.ts";
import { deliveryLimit, postBare } from "../peers/delivery.ts";
import { fairway, raw } from "../scenarios/webhooks.ts";

const TLS = process.env.TLS === "1";
if (TLS && !process.env.TARGET_TLS_CERT) {
  const dir = mkdtempSync(join(tmpdir(), "fairway-tls-"));
  const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")];
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        key,
        "-out",
        cert,
      ],
      { stdio: "ignore" },
    );
    const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: "inherit",
      env: { ...process.env, NODE_EXTRA_CA_CERTS: cert, TARGET_TLS_KEY: key, TARGET_TLS_CERT: cert },
    });
    process.exitCode = again.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit();
}

const PAIRS = Number(process.env.PAIRS ?? 3);
const ARMS = (process.env.ARMS ?? "bare,fairway").split(",");
const N = Number(process.env.N ?? 40_000);
const WARM = N / 4;

/** Minor GC (scavenge) pauses, as perf_hooks reports them. */
let scavenges: number[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === 1) scavenges.push(e.duration);
}).observe({ entryTypes: ["gc"] });

type Figures = Record<string, number | string>;

/** A TimedWindow that reads the figures above at its start and end. */
function measured(targetPid: number, arm: string) {
  let from: ReturnType<typeof read> | null = null;
  let delay: ReturnType<typeof monitorEventLoopDelay> | null = null;
  const figures: Figures = { arm };
  const read = () => ({
    t: performance.now(),
    self: process.cpuUsage(),
    target: processCpuUs(targetPid),
    pg: postgresCpuUs(),
    machine: machineTicks(),
    elu: performance.eventLoopUtilization(),
  });
  const window: TimedWindow = {
    start() {
      scavenges = [];
      delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      from = read();
    },
    end() {
      const to = read();
      delay!.disable();
      figures.seconds = (to.t - from!.t) / 1000;
      // CPU µs in all here; per delivery in done(), once the rate is known.
      figures.self_us = to.self.user + to.self.system - from!.self.user - from!.self.system;
      figures.target_us = to.target - from!.target;
      figures.postgres_us = to.pg - from!.pg;
      figures.busy_cores = +(
        ((to.machine.busy - from!.machine.busy) / (to.machine.total - from!.machine.total)) *
        cpus().length
      ).toFixed(2);
      figures.loop_utilisation = +performance.eventLoopUtilization(to.elu, from!.elu).utilization.toFixed(3);
      figures.loop_delay_p90_ms = +(delay!.percentile(90) / 1e6).toFixed(2);
      figures.loop_delay_p99_ms = +(delay!.percentile(99) / 1e6).toFixed(2);
      figures.scavenges = scavenges.length;
      figures.scavenge_ms = +scavenges.reduce((a, b) => a + b, 0).toFixed(1);
    },
  };
  /** The figures, CPU per delivery, once the arm returned its rate. */
  const done = (rate: number): Figures => {
    const count = rate * (figures.seconds as number);
    const perDelivery = (k: string) => +((figures[k] as number) / count).toFixed(1);
    const { seconds: _, ...rest } = figures;
    return {
      ...rest,
      per_s: Math.round(rate),
      self_us: perDelivery("self_us"),
      target_us: perDelivery("target_us"),
      postgres_us: perDelivery("postgres_us"),
    };
  };
  return { window, done };
}

const target = spawnWorker("target.ts");
const runs: Figures[] = [];
try {
  const { port } = await nextMessage<{ kind: string; port: number }>(target, (m) => m.kind === "listening");
  const url = `${TLS ? "https" : "http"}://127.0.0.1:${port}/hook`;
  const pid = target.pid!;
  // The scenario's body for the bare loop (webhooks.ts).
  const body = JSON.stringify({
    id: "trg_" + "x".repeat(26),
    jobId: "job_" + "x".repeat(26),
    jobName: "bench",
    scheduledFor: new Date(),
    attempt: 1,
    payload: { hello: "world" },
  });
  const arms: Record<string, () => Promise<Figures>> = {
    bare: async () => {
      const m = measured(pid, "bare");
      return m.done(await deliveryLimit(url, N, WARM, postBare(body), m.window));
    },
    fairway: async () => {
      const m = measured(pid, "fairway");
      return m.done(await fairway(url, N, WARM, m.window));
    },
    raw: async () => {
      const m = measured(pid, "raw");
      return m.done(await raw(url, N, WARM, m.window));
    },
  };
  const unknown = ARMS.filter((a) => !(a in arms));
  if (unknown.length > 0)
    throw new Error(`ARMS: no arm ${unknown.join(", ")} (there are ${Object.keys(arms).join(", ")})`);
  for (let i = 0; i < PAIRS; i++) {
    for (const arm of [...ARMS.slice(i % ARMS.length), ...ARMS.slice(0, i % ARMS.length)]) {
      const r = await arms[arm]();
      runs.push(r);
      console.log(JSON.stringify(r));
    }
  }
} finally {
  await stopChild(target);
}
for (const arm of ARMS) {
  const mine = runs.filter((r) => r.arm === arm);
  const keys = Object.keys(mine[0]).filter((k) => k !== "arm");
  console.log(
    JSON.stringify({
      arm,
      median: true,
      ...Object.fromEntries(
        keys.map((k) => [
          k,
          percentile(
            mine.map((r) => r[k] as number),
            50,
          ),
        ]),
      ),
    }),
  );
}
