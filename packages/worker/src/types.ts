// The worker's public types, self-contained so the published .d.ts needs nothing from Fairway's
// internal packages.

/** What a handler is given for one attempt of one trigger. */
export interface JobContext<P = unknown> {
  triggerId: string;
  jobId: string;
  tenantId: string;
  jobName: string;
  /** The instant this run was due (the cron fire, or the job's `at`). */
  scheduledFor: Date;
  /** 1 on the first attempt. */
  attempt: number;
  /** The job's payload as created through the API. */
  payload: P;
  /** Aborted at the attempt's timeout, or when stop() runs out of grace. */
  signal: AbortSignal;
  /** The attempt's W3C trace context: the handler runs inside it when @opentelemetry/api is installed,
   *  so its own spans are children of the attempt's. Null: none (tracing off and no create context). */
  traceparent: string | null;
  tracestate: string | null;
  /** A line for this attempt's record, returned by GET /v1/triggers/{id} and shown on the dashboard:
   *  arguments joined by spaces, objects as JSON; at most 64 KiB per attempt, the cut said. */
  log(...args: unknown[]): void;
}

/** Resolve = success; throw = a failed attempt (retried with backoff, then a dead letter). */
export type JobHandler<P = unknown> = (ctx: JobContext<P>) => Promise<unknown> | unknown;

/** Pool type → handler. `P` maps each type to its payload's type. */
export type Handlers<P extends Record<string, unknown> = Record<string, unknown>> = {
  [K in keyof P & string]: JobHandler<P[K]>;
};

/** The JSON-lines logger's interface; pass your own to route the worker's logs. */
export interface WorkerLogger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): WorkerLogger;
}

export interface WorkerOptions<P extends Record<string, unknown> = Record<string, unknown>> {
  /** The Postgres URL the Fairway server uses (postgres://…). The server runs the migrations. */
  databaseUrl: string;
  /** One handler per pool type; jobs are created with `type: "<that type>"` and no target. */
  handlers: Handlers<P>;
  /** Idle poll interval. Default 250 ms. */
  pollMs?: number;
  /** stop()'s default budget for running handlers. Default 10 000 ms. */
  graceMs?: number;
  /** Postgres connections. Default 5. */
  dbPool?: number;
  /** Let webhook jobs in these pools reach loopback/private addresses. Default false. */
  allowPrivateTargets?: boolean;
  /** JSON lines on stdout at this level (default "info"), unless `log` is given. */
  logLevel?: "debug" | "info" | "warn" | "error";
  log?: WorkerLogger;
}

export interface WorkerStats {
  claimed: number;
  settled: number;
  released: number;
  reaped: number;
  loopErrors: number;
}

export interface Worker {
  /** Registers the handler types (so the API accepts their jobs) and starts claiming. */
  start(): Promise<Worker>;
  /** Graceful stop: claims nothing more, lets running handlers finish within `graceMs`, then aborts
   *  them and releases their triggers to be run again (no attempt is counted); closes connections. */
  stop(graceMs?: number): Promise<void>;
  /** The pool types this worker serves. */
  readonly types: readonly string[];
  /** Triggers claimed and not yet finished. */
  readonly inFlight: number;
  readonly stats: Readonly<WorkerStats>;
}
