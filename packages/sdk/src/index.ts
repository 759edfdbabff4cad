// @fairway/sdk: the typed client, the admin client, and verifyWebhook for receivers.
export * from "./client.ts";
export * from "./types.ts";
export { FairwayError } from "./http.ts";
export { verifyWebhook, WebhookVerificationError } from "@fairway/core";
