// Running Fairway's real executor in the bench process: the same Executor class the server uses,
// with the undici transport and in-process handlers.
import { Executor, type ExecutorObserver, type Handler, type RetentionOptions } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import type { Db } from "@fairway/store";
import type { TimedWindow } from "./scenario.ts";
import { waitUntil } from "./seed.ts";

export interface RunOptions {
  db: Db;
  handlers?: Record<string, Handler>;
  /** Stop once this many triggers were settled by this executor. */
  settled: number;
  /** Start the clock only once this many were settled (steady state: JIT, connections, first claims);
   *  the rate is then over the triggers settled after it. Default 0: timed from start(). */
  warm?: number;
  /** Told when the clock starts and stops (studies/webhooks-cpu.ts). */
  window?: TimedWindow;
  timeoutMs: number;
  pollMs?: number;
  lookaheadMs?: number;
  /** Told of each claim's duration (the claim tick). */
  observer?: ExecutorObserver;
  /** The executor's own retention loop; default as in production (a pass at start, then once a minute). */
  retention?: RetentionOptions;
}

/** With OTEL_EXPORTER_OTLP_ENDPOINT set, the executor traces as the server's does, through the same
 *  module (docs/bench.md, "Tracing"); unset, nothing of OpenTelemetry is loaded. */
async function benchTracing() {
  if (!process.env.OTEL_EXPORTER_OTLP_ENDPOINT) return null;
  const { loadConfig } = await import("../../../apps/server/src/config.ts");
  const { startTracing } = await import("../../../apps/server/src/tracing.ts");
  return startTracing(loadConfig(process.env));
}

/** Start an executor, wait until `settled` triggers were settled, stop it; returns the elapsed ms and
 *  how many were settled in that time (all of them, or those after `warm`). */
export async function runExecutorUntil(o: RunOptions): Promise<{ ms: number; timed: number; executor: Executor }> {
  const transport = createUndiciTransport({ allowPrivate: true });
  const tracing = await benchTracing();
  const executor = new Executor({
    db: o.db,
    transport,
    handlers: o.handlers,
    allowPrivateTargets: true,
    pollMs: o.pollMs ?? 50,
    lookaheadMs: o.lookaheadMs,
    observer: o.observer,
    retention: o.retention,
    tracer: tracing?.executor,
  });
  let t0 = performance.now();
  let from = 0;
  executor.start();
  if (!o.warm) o.window?.start();
  try {
    if (o.warm) {
      await waitUntil(() => executor.stats.settled >= o.warm!, o.timeoutMs, `${o.warm} settled triggers (warm-up)`, 5);
      o.window?.start();
      t0 = performance.now();
      from = executor.stats.settled;
    }
    await waitUntil(() => executor.stats.settled >= o.settled, o.timeoutMs, `${o.settled} settled triggers`, 5);
    o.window?.end();
    return { ms: performance.now() - t0, timed: executor.stats.settled - from, executor };
  } finally {
    await executor.stop(5_000);
    await tracing?.shutdown();
    await transport.close();
  }
}

/** An executor running in-process handlers, as the fairness scenarios and studies run it (a 50 ms idle
 *  poll); `stop()` stops it and closes its transport. Not started. */
export function handlerExecutor(
  db: Db,
  handlers: Record<string, Handler>,
): { executor: Executor; stop(): Promise<void> } {
  const transport = createUndiciTransport({ allowPrivate: true });
  const executor = new Executor({ db, transport, pollMs: 50, handlers });
  return {
    executor,
    async stop() {
      await executor.stop(5_000);
      await transport.close();
    },
  };
}
