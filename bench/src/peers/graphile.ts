// graphile-worker 0.17.3, configured as its performance docs recommend
// (https://worker.graphile.org/docs/performance): concurrentJobs 24, maxPoolSize 25, a local queue
// of 500 (batched fetching), completeJobBatchDelay/failJobBatchDelay 0 (batched completion),
// prepared statements on (its default). FIFO by run_at within a priority; no fairness, no history.
import { Logger, makeWorkerUtils, run, type Runner, type Task } from "graphile-worker";
import pg from "pg";

const GRAPHILE_CONFIG = {
  concurrentJobs: 24,
  maxPoolSize: 25,
  localQueue: { size: 500 },
  completeJobBatchDelay: 0,
  failJobBatchDelay: 0,
  preparedStatements: true,
} as const;

/** Install graphile-worker's schema and queue `payloads` as `task` jobs (in batches, not measured). */
export async function graphileEnqueue(url: string, task: string, payloads: object[]): Promise<void> {
  const utils = await makeWorkerUtils({ connectionString: url });
  try {
    await utils.migrate();
    for (let i = 0; i < payloads.length; i += 5000) {
      await utils.addJobs(payloads.slice(i, i + 5000).map((payload) => ({ identifier: task, payload })));
    }
  } finally {
    await utils.release();
  }
}

/** `concurrentJobs` may be overridden where a scenario fixes the pool size for every contender. */
export async function graphileStart(
  url: string,
  tasks: Record<string, Task>,
  o: { concurrentJobs?: number } = {},
): Promise<{ stop(): Promise<void> }> {
  // Our own pool, so stopping really closes every connection before the benchmark drops the database
  // (runner.stop() alone returned before graphile's internal pool had ended, and the forced drop then
  // killed a live client with no error listener, crashing the run).
  const pgPool = new pg.Pool({ connectionString: url, max: GRAPHILE_CONFIG.maxPoolSize });
  pgPool.on("error", () => {}); // a connection dropped while idle: the pool replaces it
  const runner: Runner = await run({
    pgPool,
    concurrency: o.concurrentJobs ?? GRAPHILE_CONFIG.concurrentJobs,
    noHandleSignals: true,
    pollInterval: 100,
    taskList: tasks,
    logger: quietLogger(),
    preset: {
      worker: {
        localQueue: GRAPHILE_CONFIG.localQueue,
        completeJobBatchDelay: GRAPHILE_CONFIG.completeJobBatchDelay,
        failJobBatchDelay: GRAPHILE_CONFIG.failJobBatchDelay,
        preparedStatements: GRAPHILE_CONFIG.preparedStatements,
      },
    },
  });
  return {
    async stop() {
      await runner.stop();
      await pgPool.end();
    },
  };
}

/** Errors only: graphile logs every job at info level, which would cost more than the jobs. */
function quietLogger(): Logger {
  return new Logger(() => (level, message) => {
    if (level === "error") console.error(`[graphile-worker] ${message}`);
  });
}
