// @fairway/worker: run your own TypeScript handlers in Fairway's fair pools, in your own process.
export { createWorker } from "./create-worker.ts";
export type { Handlers, JobContext, JobHandler, Worker, WorkerLogger, WorkerOptions, WorkerStats } from "./types.ts";
