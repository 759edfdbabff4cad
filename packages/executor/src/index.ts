// @fairway/executor: the runtime-neutral executor and the fetch transport; the undici transport for
// Node lives in "@fairway/executor/node".
export { Executor } from "./executor.ts";
/** @public the options and handler types of the executor's API */
export type { ExecutorHealth, ExecutorOptions } from "./executor.ts";
/** @public */
export type { Handler, HandlerContext } from "./run-trigger.ts";
export { RunAbort, type Transport } from "./transport.ts";
export { createFetchTransport } from "./fetch-transport.ts";
export type { ExecutorObserver } from "./observe.ts";
export { Retention, type RetentionOptions } from "./retention.ts";
/** @public */
export type { Mailer } from "./notify.ts";
export { createHttpMailer, type HttpMailApi } from "./http-mailer.ts";
/** @public the tracer a runtime plugs in (the Node server's OpenTelemetry) */
export { ATTEMPT_LOG_MAX, type AttemptSpan, type AttemptTracer } from "./trace.ts";
