export * from "./executor.ts";
export * from "./run-trigger.ts";
export * from "./settler.ts";
export * from "./transport.ts";
export * from "./fetch-transport.ts";
export * from "./ready-index.ts";
export { maxLeasesHeld } from "./pool.ts";
export * from "./heartbeat.ts";
export * from "./observe.ts";
