// @fairway/sdk: the typed client, the admin client, and verifyWebhook for receivers.
export {
  createAdminClient,
  createClient,
  type AdminClientOptions,
  type ClientOptions,
  type FairwayAdminClient,
  type FairwayClient,
  type PageOptions,
} from "./client.ts";
export type { ScheduleInput, CreateJobInput, UpdateJobInput, Job, Attempt, Trigger, Page, Quota, TenantQuotas, Tenant, PoolConfig } from "./types.ts";
export { FairwayError } from "./http.ts";
export { verifyWebhook, WebhookVerificationError } from "@fairway/core";
