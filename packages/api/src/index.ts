export * from "./app.ts";
export { ApiError } from "./errors.ts";
export * as schemas from "./schemas.ts";
export { openApiDocument } from "./openapi.ts";
export * as responses from "./responses.ts";
