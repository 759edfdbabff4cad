// One executor process for multi-process scenarios (caps, scale). Configured by the FAIRWAY_BENCH
// env (JSON); its handler sleeps a random time and reports every run's start/end (high-resolution
// wall clock, comparable across processes) to the parent over IPC in batches. On "stop" it stops the
// executor gracefully and reports its resident memory.
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { connectPostgres } from "@fairway/store";

export interface ChildConfig {
  url: string;
  minMs: number;
  maxMs: number;
  /** Report each run's interval (caps); off for scale, where only counts and memory matter. */
  report: boolean;
}
export type ChildMessage =
  | { kind: "runs"; runs: Array<[tenant: string, start: number, end: number]> }
  | { kind: "stopped"; rssMb: number; settled: number };

const cfg = JSON.parse(process.env.FAIRWAY_BENCH ?? "{}") as ChildConfig;
const store = connectPostgres(cfg.url, { max: 4 });
const transport = createUndiciTransport({ allowPrivate: true });
const wallNow = () => performance.timeOrigin + performance.now();

let batch: Array<[string, number, number]> = [];
const flush = () => {
  if (batch.length > 0) process.send!({ kind: "runs", runs: batch } satisfies ChildMessage);
  batch = [];
};
const timer = setInterval(flush, 50);

const executor = new Executor({
  db: store.db,
  transport,
  allowPrivateTargets: true,
  pollMs: 50,
  handlers: {
    work: async (ctx) => {
      const start = wallNow();
      await new Promise((r) => setTimeout(r, cfg.minMs + Math.random() * (cfg.maxMs - cfg.minMs)));
      if (cfg.report) batch.push([ctx.tenantId, start, wallNow()]);
    },
  },
}).start();

process.on("message", async (m) => {
  if (m !== "stop") return;
  await executor.stop(5_000);
  clearInterval(timer);
  flush();
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  process.send!({ kind: "stopped", rssMb, settled: executor.stats.settled } satisfies ChildMessage, () => {
    void Promise.all([store.close(), transport.close()]).finally(() => process.exit(0));
  });
});
