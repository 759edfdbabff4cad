// Running Fairway's real executor in the bench process: the same Executor class the server uses,
// with the undici transport and in-process handlers.
import { Executor, type Handler } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import type { Db } from "@fairway/store";
import { waitUntil } from "./seed.ts";

export interface RunOptions {
  db: Db;
  handlers?: Record<string, Handler>;
  /** Stop once this many triggers were settled by this executor. */
  settled: number;
  timeoutMs: number;
  pollMs?: number;
  lookaheadMs?: number;
}

/** Start an executor, wait until `settled` triggers were settled, stop it; returns elapsed ms. */
export async function runExecutorUntil(o: RunOptions): Promise<{ ms: number; executor: Executor }> {
  const transport = createUndiciTransport({ allowPrivate: true });
  const executor = new Executor({
    db: o.db,
    transport,
    handlers: o.handlers,
    allowPrivateTargets: true,
    pollMs: o.pollMs ?? 50,
    lookaheadMs: o.lookaheadMs,
  });
  const t0 = performance.now();
  executor.start();
  try {
    await waitUntil(() => executor.stats.settled >= o.settled, o.timeoutMs, `${o.settled} settled triggers`, 5);
    return { ms: performance.now() - t0, executor };
  } finally {
    await executor.stop(5_000);
    await transport.close();
  }
}
