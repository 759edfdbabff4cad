// @fairway/api: the HTTP API (Hono); the runtimes build its dependencies and hand them to createApp.
export { createApp, type ApiCoordinator } from "./app.ts";
