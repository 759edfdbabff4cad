// @fairway/core: pure logic shared by every package; no I/O, runs in Node and Workers.
export * from "./types.ts";
export * from "./cron.ts";
export * from "./retry.ts";
export * from "./signing.ts";
export * from "./fairshare.ts";
export * from "./ssrf.ts";
export * from "./text.ts";
export * from "./ids.ts";
export * from "./log.ts";
export * from "./schedule.ts";
export * from "./secret-refs.ts";
export * from "./secrets-crypto.ts";
