// @fairway/sdk: the typed client, the admin client, and verifyWebhook for receivers. No runtime
// dependencies: fetch and WebCrypto only (Node ≥ 18, Bun, Deno, Workers).
export * from "./client.ts";
export * from "./types.ts";
export * from "./errors.ts";
export { paginate, retryAfterMs } from "./http.ts";
export * from "./webhooks.ts";
