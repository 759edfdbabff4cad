export * from "./app.ts";
export { ApiError } from "./errors.ts";
export * as schemas from "./schemas.ts";
