// "@fairway/coord/upstash": the Upstash REST driver alone, for runtimes that must not bundle ioredis
// (a Cloudflare Worker: ioredis needs node:net). The main entry re-exports the same functions.
export type { Coordinator, LimitResult, ReadyEntry } from "./coordinator.ts";
export { createUpstashCoordinator, type UpstashCoordinatorOptions } from "./upstash-driver.ts";
