// The OpenAPI 3.1 document, generated from the same zod schemas that validate requests (schemas.ts)
// and that describe every response (responses.ts). test/packages/contract.test.ts validates live
// responses against it.
import { z } from "zod";
import {
  createChannelBody,
  createJobBody,
  notificationListQuery,
  createTenantBody,
  JOB_STATUSES,
  pageQuery,
  putPoolBody,
  putSecretBody,
  updateJobBody,
  updateTenantBody,
} from "./schemas.ts";
import {
  apiKeyResponse,
  channelResponse,
  createdTenantResponse,
  deadLetterResponse,
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
} from "./responses.ts";

const schema = (s: z.ZodType, io: "input" | "output") => {
  const { $schema: _, ...json } = z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return json;
};

const SCHEMAS = {
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
} satisfies Record<string, z.ZodType>;
type SchemaName = keyof typeof SCHEMAS;

const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (name: SchemaName) => ({ "application/json": { schema: ref(name) } });
const body = (s: z.ZodType) => ({ required: true, content: { "application/json": { schema: schema(s, "input") } } });
/** PATCH bodies are JSON Merge Patch (RFC 7396); plain application/json is accepted too. */
const mergePatch = (s: z.ZodType) => ({
  required: true,
  content: {
    "application/merge-patch+json": { schema: schema(s, "input") },
    "application/json": { schema: schema(s, "input") },
  },
});
const inQuery = (name: string, description: string, values?: readonly string[]) => ({
  name,
  in: "query",
  required: false,
  description,
  schema: values ? { type: "string", enum: values } : { type: "string" },
});

const ERRORS: Record<number, string> = {
  400: "Invalid input (validation_error, invalid_json, invalid_text, too_deep, invalid_cron, invalid_timezone, unknown_secret, unknown_channel, email_unavailable, or a blocked target)",
  401: "Missing or unknown credentials (unauthorized)",
  403: "Credentials not allowed here, or a suspended tenant (forbidden, tenant_suspended)",
  404: "No such resource (not_found)",
  409: "Conflict (tenant_exists, idempotency_conflict, max_jobs_exceeded, not_dead, job_completed, job_cancelled, too_many_channels)",
  413: "Payload over the tenant's limit, or body over the server's (payload_too_large)",
  429: "Per-tenant API rate limit (rate_limited); Retry-After says when to try again",
  503: "Not configured on this server (secrets_unavailable: no FAIRWAY_SECRETS_KEY)",
};

/** The success answer, the listed error statuses, and every other status as the error envelope. */
function responses(status: number, description: string, name: SchemaName, errors: number[]) {
  const out: Record<string, unknown> = { [status]: { description, content: jsonContent(name) } };
  for (const code of errors) out[code] = { description: ERRORS[code], content: jsonContent("Error") };
  out.default = {
    description: "Any other failure (internal_error, …): the error envelope",
    content: jsonContent("Error"),
  };
  return out;
}

const pathParam = (name: string, description: string) => ({
  name,
  in: "path",
  required: true,
  schema: { type: "string" },
  description,
});
const pageParams = (withJobId = false) => {
  const props = (schema(pageQuery, "input") as { properties: Record<string, unknown> }).properties;
  return ["limit", "cursor", ...(withJobId ? ["jobId"] : [])].map((name) => ({
    name,
    in: "query",
    required: false,
    schema: props[name],
  }));
};

const TENANT = [401, 403, 429];
const ADMIN = [401, 403];
const tenantOp = (o: object) => ({ tags: ["Jobs and triggers"], security: [{ tenantKey: [] }], ...o });
const adminOp = (o: object) => ({ tags: ["Admin"], security: [{ adminToken: [] }], ...o });
const jobId = [pathParam("id", "The job id")];
const triggerId = [pathParam("id", "The trigger id")];
const tenantId = [pathParam("id", "The tenant id")];
const poolType = [pathParam("type", "The pool type, e.g. webhook or email.send")];

function build() {
  return {
    openapi: "3.1.0",
    info: {
      title: "Fairway",
      version: "1",
      description:
        'Multi-tenant, fairness-first job scheduler. Every failure answers `{ "error": { "code", "message", "details"? } }` with a stable code.',
    },
    tags: [
      { name: "Jobs and triggers", description: "With a tenant API key (fw_…)" },
      { name: "Admin", description: "With the admin token" },
      { name: "Operations" },
    ],
    components: {
      securitySchemes: {
        tenantKey: { type: "http", scheme: "bearer", description: "A tenant API key (fw_…)" },
        adminToken: { type: "http", scheme: "bearer", description: "The admin token" },
      },
      schemas: Object.fromEntries(Object.entries(SCHEMAS).map(([name, s]) => [name, schema(s, "output")])),
    },
    paths: {
      "/v1/jobs": {
        post: tenantOp({
          summary: "Create a job (honours Idempotency-Key)",
          parameters: [
            {
              name: "idempotency-key",
              in: "header",
              required: false,
              schema: { type: "string", minLength: 1, maxLength: 200 },
            },
          ],
          requestBody: body(createJobBody),
          responses: responses(
            201,
            "The job (a replay of an Idempotency-Key answers the same, with Idempotent-Replayed: true)",
            "Job",
            [...TENANT, 400, 409, 413],
          ),
        }),
        get: tenantOp({
          summary: "List jobs (cursor pagination; cancelled jobs only with ?status=cancelled)",
          parameters: [
            ...pageParams(),
            inQuery("status", "Only jobs in this status; without it, every status but cancelled", JOB_STATUSES),
            inQuery("type", "Only jobs of this pool type"),
            inQuery("name", "Only jobs with exactly this name"),
          ],
          responses: responses(200, "A page of jobs", "JobPage", [...TENANT, 400]),
        }),
      },
      "/v1/jobs/{id}": {
        get: tenantOp({
          summary: "A job with its next 5 fires",
          parameters: jobId,
          responses: responses(200, "The job", "Job", [...TENANT, 404]),
        }),
        patch: tenantOp({
          summary: "Update a job (JSON Merge Patch; from its next fire)",
          parameters: jobId,
          requestBody: mergePatch(updateJobBody),
          responses: responses(200, "The job", "Job", [...TENANT, 400, 404, 409, 413]),
        }),
        delete: tenantOp({
          summary: "Cancel a job and its pending triggers (idempotent)",
          parameters: jobId,
          responses: responses(200, "The job", "Job", [...TENANT, 404]),
        }),
      },
      "/v1/jobs/{id}/pause": {
        post: tenantOp({
          summary: "Pause",
          parameters: jobId,
          responses: responses(200, "The job", "Job", [...TENANT, 404, 409]),
        }),
      },
      "/v1/jobs/{id}/resume": {
        post: tenantOp({
          summary: "Resume",
          parameters: jobId,
          responses: responses(200, "The job", "Job", [...TENANT, 404]),
        }),
      },
      "/v1/jobs/{id}/run": {
        post: tenantOp({
          summary: "Fire now",
          parameters: jobId,
          responses: responses(201, "The new trigger", "Trigger", [...TENANT, 404]),
        }),
      },
      "/v1/jobs/{id}/triggers": {
        get: tenantOp({
          summary: "A job's triggers, newest first",
          parameters: [...jobId, ...pageParams()],
          responses: responses(200, "A page of triggers", "TriggerPage", [...TENANT, 400, 404]),
        }),
      },
      "/v1/triggers/{id}": {
        get: tenantOp({
          summary: "A trigger with its attempts",
          parameters: triggerId,
          responses: responses(200, "The trigger", "Trigger", [...TENANT, 404]),
        }),
      },
      "/v1/triggers/{id}/replay": {
        post: tenantOp({
          summary: "Replay a dead letter",
          parameters: triggerId,
          responses: responses(200, "The trigger, pending again", "Trigger", [...TENANT, 404, 409]),
        }),
      },
      "/v1/dead-letters": {
        get: tenantOp({
          summary: "Dead letters, newest first, with the job's name and type and the last attempt",
          parameters: pageParams(true),
          responses: responses(200, "A page of dead letters", "DeadLetterPage", [...TENANT, 400]),
        }),
      },
      "/v1/secrets": {
        get: tenantOp({
          summary: "The tenant's secrets: names and times, never values",
          responses: responses(200, "The secrets", "SecretList", TENANT),
        }),
      },
      "/v1/secrets/{name}": {
        put: tenantOp({
          summary: "Create or replace a secret (name [A-Z][A-Z0-9_]{0,63}); targets use it as $" + "{secrets.NAME}",
          parameters: [pathParam("name", "The secret's name")],
          requestBody: body(putSecretBody),
          responses: responses(200, "The secret (never its value)", "Secret", [...TENANT, 400, 503]),
        }),
        delete: tenantOp({
          summary: "Delete a secret (deliveries naming it then end secret_missing)",
          parameters: [pathParam("name", "The secret's name")],
          responses: { ...responses(204, "Deleted", "Error", [...TENANT, 404]), 204: { description: "Deleted" } },
        }),
      },
      "/v1/metrics": {
        get: tenantOp({
          summary: "The tenant's own series, Prometheus text",
          responses: {
            200: { description: "Text exposition format", content: { "text/plain": { schema: { type: "string" } } } },
          },
        }),
      },
      "/v1/notification-channels": {
        post: tenantOp({
          summary: "Create a notification channel: webhook (signed Standard Webhooks envelope), slack or email",
          requestBody: body(createChannelBody),
          responses: responses(201, "The channel", "Channel", [...TENANT, 400, 409]),
        }),
        get: tenantOp({
          summary: "The tenant's notification channels",
          parameters: pageParams(),
          responses: responses(200, "A page of channels", "ChannelPage", [...TENANT, 400]),
        }),
      },
      "/v1/notification-channels/{id}": {
        delete: tenantOp({
          summary: "Delete a channel (its notifications not yet sent are cancelled)",
          parameters: [pathParam("id", "The channel id")],
          responses: { ...responses(204, "Deleted", "Error", [...TENANT, 404]), 204: { description: "Deleted" } },
        }),
      },
      "/v1/notification-channels/{id}/test": {
        post: tenantOp({
          summary: "Queue a test notification to the channel (outside its fold window)",
          parameters: [pathParam("id", "The channel id")],
          responses: responses(202, "The queued notification", "Notification", [...TENANT, 404]),
        }),
      },
      "/v1/notifications": {
        get: tenantOp({
          summary: "Notifications, newest first: event, channel, when, delivery status",
          parameters: Object.entries(
            (schema(notificationListQuery, "input") as { properties: Record<string, unknown> }).properties,
          ).map(([name, s]) => ({ name, in: "query", required: false, schema: s })),
          responses: responses(200, "A page of notifications", "NotificationPage", [...TENANT, 400]),
        }),
      },
      "/v1/quota": {
        get: tenantOp({ summary: "Limits and live usage", responses: responses(200, "Quota", "Quota", TENANT) }),
      },
      "/v1/admin/tenants": {
        post: adminOp({
          summary: "Create a tenant",
          requestBody: body(createTenantBody),
          responses: responses(201, "The tenant and its signing secret (shown once)", "CreatedTenant", [
            ...ADMIN,
            400,
            409,
          ]),
        }),
        get: adminOp({
          summary: "List tenants",
          parameters: pageParams(),
          responses: responses(200, "A page of tenants", "TenantPage", [...ADMIN, 400]),
        }),
      },
      "/v1/admin/tenants/{id}": {
        get: adminOp({
          summary: "A tenant",
          parameters: tenantId,
          responses: responses(200, "The tenant", "Tenant", [...ADMIN, 404]),
        }),
        patch: adminOp({
          summary: "Update quotas or status (JSON Merge Patch)",
          parameters: tenantId,
          requestBody: mergePatch(updateTenantBody),
          responses: responses(200, "The tenant", "Tenant", [...ADMIN, 400, 404]),
        }),
      },
      "/v1/admin/tenants/{id}/keys": {
        post: adminOp({
          summary: "Issue an API key (shown once)",
          parameters: tenantId,
          responses: responses(201, "The key", "ApiKey", [...ADMIN, 404]),
        }),
      },
      "/v1/admin/tenants/{id}/keys/{keyId}": {
        delete: adminOp({
          summary: "Revoke a key",
          parameters: [...tenantId, pathParam("keyId", "The key id")],
          responses: responses(200, "Revoked", "RevokedKey", [...ADMIN, 404]),
        }),
      },
      "/v1/admin/tenants/{id}/signing-secret": {
        get: adminOp({
          summary: "The signing secret (and the previous one during a rotation)",
          parameters: tenantId,
          responses: responses(200, "The secret", "SigningSecret", [...ADMIN, 404]),
        }),
      },
      "/v1/admin/tenants/{id}/signing-secret/rotate": {
        post: adminOp({
          summary: "Rotate the signing secret (the old one keeps signing for 24 h)",
          parameters: tenantId,
          responses: responses(200, "The new secret", "RotatedSecret", [...ADMIN, 404]),
        }),
      },
      "/v1/admin/tenants/{id}/portal-link": {
        post: adminOp({
          summary: "A signed, short-lived link to the tenant's dashboard view ({ ttlSeconds? }, default 900)",
          parameters: tenantId,
          responses: responses(201, "The link", "PortalLink", [...ADMIN, 400, 404]),
        }),
      },
      "/v1/admin/tenants/{id}/portal-sessions/revoke": {
        post: adminOp({
          summary:
            "End every portal link and session of the tenant now (rotating its signing secret or suspending it does too)",
          parameters: tenantId,
          responses: responses(200, "Revoked", "PortalRevoke", [...ADMIN, 404]),
        }),
      },
      "/v1/admin/pools": {
        get: adminOp({ summary: "Every pool's config", responses: responses(200, "The pools", "PoolList", ADMIN) }),
      },
      "/v1/admin/pools/{type}": {
        get: adminOp({
          summary: "Pool config (defaults if never set)",
          parameters: poolType,
          responses: responses(200, "The pool", "Pool", [...ADMIN, 400]),
        }),
        put: adminOp({
          summary: "Set pool config",
          parameters: poolType,
          requestBody: body(putPoolBody),
          responses: responses(200, "The pool", "Pool", [...ADMIN, 400]),
        }),
        patch: adminOp({
          summary: "Change pool config (JSON Merge Patch)",
          parameters: poolType,
          requestBody: mergePatch(putPoolBody.partial()),
          responses: responses(200, "The pool", "Pool", [...ADMIN, 400]),
        }),
      },
      "/v1/admin/pools/{type}/pause": {
        post: adminOp({
          summary: "Stop claiming this type (running work finishes, nothing is lost)",
          parameters: poolType,
          responses: responses(200, "The pool", "Pool", [...ADMIN, 400]),
        }),
      },
      "/v1/admin/pools/{type}/resume": {
        post: adminOp({
          summary: "Claim this type again",
          parameters: poolType,
          responses: responses(200, "The pool", "Pool", [...ADMIN, 400]),
        }),
      },
      "/v1/admin/executors": {
        get: adminOp({
          summary: "Live executors, and those lost or stopped in the last hour",
          responses: responses(200, "The executors", "ExecutorList", ADMIN),
        }),
      },
      "/v1/admin/secrets/reencrypt": {
        post: adminOp({
          summary: "Re-seal every secret under FAIRWAY_SECRETS_KEY (after a rotation)",
          responses: responses(200, "Counts", "Reencrypted", [...ADMIN, 503]),
        }),
      },
      "/v1/admin/stats": {
        get: adminOp({
          summary: "Per-tenant figures, and handler pools",
          responses: responses(200, "Stats", "Stats", ADMIN),
        }),
      },
      "/healthz": {
        get: {
          tags: ["Operations"],
          summary: "Liveness and database reachability",
          responses: {
            200: { description: "Healthy", content: jsonContent("Health") },
            503: { description: "Database unreachable", content: jsonContent("Health") },
          },
        },
      },
      "/metrics": {
        get: {
          tags: ["Operations"],
          summary: "Prometheus metrics (admin token or FAIRWAY_METRICS_TOKEN)",
          responses: {
            200: { description: "Text exposition format", content: { "text/plain": { schema: { type: "string" } } } },
          },
        },
      },
      "/openapi.json": {
        get: {
          tags: ["Operations"],
          summary: "This document",
          responses: {
            200: { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } },
          },
        },
      },
      "/docs": {
        get: {
          tags: ["Operations"],
          summary: "Interactive reference for this document",
          responses: { 200: { description: "HTML", content: { "text/html": { schema: { type: "string" } } } } },
        },
      },
    },
  };
}

let cached: ReturnType<typeof build> | null = null;

export function openApiDocument() {
  cached ??= build();
  return cached;
}
