// The named schemas of the OpenAPI document (components/schemas): every response shape (responses.ts)
// and every request body (schemas.ts). A route names its answer and its body by these keys, so the
// document refers to one definition instead of repeating it, and generated clients get these names.
import { z } from "zod";
import {
  createChannelBody,
  backfillBody,
  createJobBody,
  createTenantBody,
  jsonValue,
  portalLinkBody,
  patchKeyDefaultsBody,
  putKeyBody,
  putPoolBody,
  putSecretBody,
  replayDeadLettersBody,
  rerunTriggerBody,
  updateJobBody,
  updateTenantBody,
} from "./schemas.ts";
import {
  apiKeyResponse,
  backfillResponse,
  channelResponse,
  createdTenantResponse,
  deadLetterResponse,
  replayDeadLettersResponse,
  errorResponse,
  executorListResponse,
  healthResponse,
  jobResponse,
  notificationResponse,
  pageOf,
  poolListResponse,
  poolResponse,
  portalLinkResponse,
  portalRevokeResponse,
  quotaResponse,
  reencryptResponse,
  revokedKeyResponse,
  rotatedSecretResponse,
  secretListResponse,
  secretResponse,
  signingSecretResponse,
  statsResponse,
  tenantResponse,
  triggerResponse,
  keyInfoResponse,
  keyPolicyResponse,
} from "./responses.ts";

/** What the API answers (zod's output side: defaults applied, dates as strings). */
export const RESPONSES = {
  Error: errorResponse,
  Tenant: tenantResponse,
  CreatedTenant: createdTenantResponse,
  TenantPage: pageOf(tenantResponse),
  ApiKey: apiKeyResponse,
  RevokedKey: revokedKeyResponse,
  RotatedSecret: rotatedSecretResponse,
  SigningSecret: signingSecretResponse,
  PortalLink: portalLinkResponse,
  PortalRevoke: portalRevokeResponse,
  Secret: secretResponse,
  SecretList: secretListResponse,
  Reencrypted: reencryptResponse,
  ExecutorList: executorListResponse,
  DeadLetterPage: pageOf(deadLetterResponse),
  DeadLetterReplay: replayDeadLettersResponse,
  Pool: poolResponse,
  PoolList: poolListResponse,
  Stats: statsResponse,
  Job: jobResponse,
  JobPage: pageOf(jobResponse),
  Trigger: triggerResponse,
  TriggerPage: pageOf(triggerResponse),
  Quota: quotaResponse,
  Channel: channelResponse,
  ChannelPage: pageOf(channelResponse),
  Notification: notificationResponse,
  NotificationPage: pageOf(notificationResponse),
  Health: healthResponse,
  KeyPolicy: keyPolicyResponse,
  KeyInfo: keyInfoResponse,
  KeyPage: pageOf(keyInfoResponse),
  Backfill: backfillResponse,
  BackfillPage: pageOf(backfillResponse),
  OpenApiDocument: z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }),
} satisfies Record<string, z.ZodType>;

/** What the API accepts (zod's input side: fields with defaults are optional). */
export const BODIES = {
  CreateJob: createJobBody,
  UpdateJob: updateJobBody,
  CreateTenant: createTenantBody,
  UpdateTenant: updateTenantBody,
  PutPool: putPoolBody,
  UpdatePool: putPoolBody.partial(),
  PutSecret: putSecretBody,
  CreateChannel: createChannelBody,
  CreatePortalLink: portalLinkBody,
  PutKey: putKeyBody,
  UpdateKeyDefaults: patchKeyDefaultsBody,
  CreateBackfill: backfillBody,
  ReplayDeadLetters: replayDeadLettersBody,
  RerunTrigger: rerunTriggerBody,
} satisfies Record<string, z.ZodType>;

/** Recursive schemas, named in both halves so their self-references have a target. */
export const SHARED = { JsonValue: jsonValue } satisfies Record<string, z.ZodType>;

export type ResponseName = keyof typeof RESPONSES;
export type BodyName = keyof typeof BODIES;
