// @fairway/api: the HTTP API (Hono) and the OpenAPI document generated from its zod schemas.
export { createApp, type ApiCoordinator, type AppDeps } from "./app.ts";
export { openApiDocument } from "./openapi.ts";
