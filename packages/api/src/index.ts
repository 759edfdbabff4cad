// @fairway/api: the HTTP API (Hono); the runtimes build its dependencies and hand them to createApp.
export { createApp } from "./app.ts";
export type { ApiCoordinator } from "./env.ts";
