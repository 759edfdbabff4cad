// What every route answers, as zod schemas: the OpenAPI document's response schemas are generated from
// them (openapi.ts), the contract test validates live responses against that document, and the SDK's
// types are checked against them (test/packages/sdk-types.ts). Strict objects: a field a route adds
// without adding it here fails the contract test.
import { z } from "zod";
import { ON_BUSY } from "./schemas.ts";

const iso = z.iso.datetime({ offset: true });
const id = z.string();

export const errorResponse = z.strictObject({
  error: z.strictObject({
    /** Stable, machine-readable: validation_error, not_found, rate_limited, … */
    code: z.string(),
    /** What was wrong and what to send instead. */
    message: z.string(),
    details: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional(),
  }),
});

const quotaFields = {
  maxInFlight: z.number().int(),
  weight: z.number(),
  ratePerSecond: z.number().nullable(),
  burst: z.number().int().nullable(),
  maxJobs: z.number().int(),
  maxPayloadBytes: z.number().int(),
  historyRetentionDays: z.number().int(),
  deadRetentionDays: z.number().int(),
  consecutiveFailureLimit: z.number().int(),
};

const keyDefaultsFields = {
  maxInFlight: z.number().int().nullable(),
  ratePerSecond: z.number().nullable(),
  weight: z.number(),
};

/** The quota a plan governs, as it is in force for a tenant: its own value, else its plan's, else the
 *  default. */
const effectiveResponse = z.strictObject({
  maxInFlight: z.number().int(),
  weight: z.number(),
  ratePerSecond: z.number().nullable(),
  burst: z.number().int().nullable(),
  maxJobs: z.number().int(),
  maxPayloadBytes: z.number().int(),
  historyRetentionDays: z.number().int(),
  keyDefaults: z.strictObject(keyDefaultsFields),
});

/** The values set on the tenant itself (they win over its plan's); only the fields it sets. */
const overridesResponse = z.strictObject({
  maxInFlight: z.number().int().optional(),
  weight: z.number().optional(),
  ratePerSecond: z.number().optional(),
  burst: z.number().int().optional(),
  maxJobs: z.number().int().optional(),
  maxPayloadBytes: z.number().int().optional(),
  historyRetentionDays: z.number().int().optional(),
  keyDefaults: z
    .strictObject({
      maxInFlight: z.number().int().optional(),
      ratePerSecond: z.number().optional(),
      weight: z.number().optional(),
    })
    .optional(),
});

/** A tenant: the quota fields at the top are the effective ones (what the claim applies), as is
 *  `effective`; `overrides` are the tenant's own values, `plan` its plan's id (null: none). */
export const tenantResponse = z.strictObject({
  id,
  name: z.string(),
  status: z.enum(["active", "suspended"]),
  plan: z.string().nullable(),
  ...quotaFields,
  effective: effectiveResponse,
  overrides: overridesResponse,
  createdAt: iso,
  updatedAt: iso,
});

/** A quota plan: null where it sets nothing (its tenants take the default). */
export const planResponse = z.strictObject({
  id,
  name: z.string().nullable(),
  maxInFlight: z.number().int().nullable(),
  weight: z.number().nullable(),
  ratePerSecond: z.number().nullable(),
  burst: z.number().int().nullable(),
  maxJobs: z.number().int().nullable(),
  maxPayloadBytes: z.number().int().nullable(),
  historyDays: z.number().int().nullable(),
  keyDefaults: z.strictObject({
    maxInFlight: z.number().int().nullable(),
    ratePerSecond: z.number().nullable(),
    weight: z.number().nullable(),
  }),
  /** How many tenants are on the plan. */
  tenants: z.number().int(),
  createdAt: iso,
  updatedAt: iso,
});
export const deletedPlanResponse = z.strictObject({ id, deleted: z.literal(true) });
export const createdTenantResponse = tenantResponse.extend({ signingSecret: z.string() });

export const apiKeyResponse = z.strictObject({ id, key: z.string(), prefix: z.string(), createdAt: iso });
export const revokedKeyResponse = z.strictObject({ id, revoked: z.literal(true) });
export const rotatedSecretResponse = z.strictObject({ signingSecret: z.string(), previousSecretExpiresAt: iso });
export const signingSecretResponse = z.strictObject({
  signingSecret: z.string(),
  /** During a rotation's overlap: the secret that still signs too, and until when. */
  previousSigningSecret: z.string().optional(),
  previousSecretExpiresAt: iso.optional(),
});

/** A tenant portal link: opens that tenant's dashboard view and nothing else, until it expires. */
export const portalLinkResponse = z.strictObject({ url: z.string(), expiresAt: iso });
export const portalRevokeResponse = z.strictObject({ tenantId: z.string(), revokedAt: iso });

export const secretResponse = z.strictObject({ name: z.string(), createdAt: iso, updatedAt: iso });
export const secretListResponse = z.strictObject({ data: z.array(secretResponse) });
export const reencryptResponse = z.strictObject({
  keyId: z.string(),
  reencrypted: z.number().int(),
  unreadable: z.number().int(),
});

export const executorListResponse = z.strictObject({
  data: z.array(
    z.strictObject({
      id,
      status: z.enum(["live", "lost", "stopped"]),
      host: z.string(),
      pid: z.number().int(),
      version: z.string(),
      startedAt: iso,
      lastHeartbeatAt: iso,
      heartbeatTimeoutMs: z.number().int(),
      stoppedAt: iso.nullable(),
      lostAt: iso.nullable(),
      pools: z.array(z.strictObject({ type: z.string(), concurrency: z.number().int(), inFlight: z.number().int() })),
    }),
  ),
});

export const poolResponse = z.strictObject({
  type: z.string(),
  concurrency: z.number().int(),
  timeoutMs: z.number().int(),
  leaseMs: z.number().int(),
  maxAttempts: z.number().int(),
  initialDelayMs: z.number().int(),
  maxDelayMs: z.number().int(),
  backoff: z.enum(["exponential", "linear", "fixed"]),
  jitter: z.enum(["full", "none"]),
  maxResponseBytes: z.number().int(),
  paused: z.boolean(),
});
export const poolListResponse = z.strictObject({ data: z.array(poolResponse) });

/** A tenant's usage, in the admin stats and in its own GET /v1/quota. */
const usageFields = {
  running: z.number().int(),
  due: z.number().int(),
  pending: z.number().int(),
  jobs: z.number().int(),
  dead: z.number().int(),
  oldestDueLagMs: z.number().int().nullable(),
};

export const statsResponse = z.strictObject({
  tenants: z.array(
    z.strictObject({
      tenantId: id,
      maxInFlight: z.number().int(),
      status: z.enum(["active", "suspended"]),
      ...usageFields,
    }),
  ),
  /** Per pool: paused, concurrency, running, due and pending. */
  pools: z.array(
    z.strictObject({
      type: z.string(),
      paused: z.boolean(),
      concurrency: z.number().int(),
      running: z.number().int(),
      due: z.number().int(),
      pending: z.number().int(),
    }),
  ),
  /** Pools served by handler workers; served: false = no worker seen lately, `due` waits for one. */
  handlerPools: z.array(
    z.strictObject({ type: z.string(), served: z.boolean(), lastSeenAt: iso, due: z.number().int() }),
  ),
});

export const jobResponse = z.strictObject({
  id,
  name: z.string(),
  type: z.string(),
  /** The fairness key its triggers are shared and limited by inside the tenant; null: none. */
  key: z.string().nullable(),
  status: z.enum(["active", "paused", "completed", "failed", "cancelled"]),
  /** Why Fairway paused it (http_410, consecutive_failures, schedule_not_computable); null otherwise. */
  pauseReason: z.string().nullable(),
  schedule: z.union([
    // spread: the window each fire is offset within (ISO 8601 duration), only when set.
    z.strictObject({ cron: z.string(), timezone: z.string(), spread: z.string().optional() }),
    z.strictObject({ at: iso }),
  ]),
  target: z
    .strictObject({
      url: z.string(),
      method: z.enum(["POST", "PUT", "PATCH", "GET", "HEAD", "DELETE"]),
      headers: z.record(z.string(), z.string()).optional(),
      /** Sent verbatim (a string as is, other JSON as JSON); absent: the delivery envelope. */
      body: z.unknown().optional(),
    })
    .nullable(),
  payload: z.unknown(),
  retry: z.strictObject({
    maxAttempts: z.number().int(),
    initialDelayMs: z.number().int(),
    maxDelayMs: z.number().int(),
    backoff: z.enum(["exponential", "linear", "fixed"]),
    jitter: z.enum(["full", "none"]),
  }),
  timeoutMs: z.number().int().nullable(),
  priority: z.number().int(),
  overlap: z.enum(["allow", "skip", "buffer_one"]),
  onBusy: z.enum(ON_BUSY),
  misfire: z.enum(["fire_once", "skip", "fire_all"]),
  catchupWindowMs: z.number().int(),
  delivery: z.enum(["at_least_once", "at_most_once"]),
  /** Which channels hear about it: null = all of the tenant's, false = none. */
  notify: z.union([z.literal(false), z.strictObject({ channels: z.array(z.string()) })]).nullable(),
  /** The job's tags ({} for none). */
  tags: z.record(z.string(), z.string()),
  nextFireAt: iso.nullable(),
  /** Fires in a row that ended dead (dead letters) since its last success or resume; 0 when healthy. */
  failureStreak: z.number().int(),
  /** GET /v1/jobs and GET /v1/jobs/{id}: what its latest tried fire came to, and when; null: never tried.
   *  failed = its last attempt failed and a retry is pending; dead_lettered = its retries ran out;
   *  unknown = an at-most-once delivery lost in flight; cancelled = it ran and was cut or cancelled. */
  lastRun: z
    .strictObject({ outcome: z.enum(["succeeded", "failed", "dead_lettered", "unknown", "cancelled"]), at: iso })
    .nullable()
    .optional(),
  /** GET, PATCH and resume of a cron job: its next 5 fires. */
  nextFires: z.array(iso).optional(),
  /** On create: the one-time job's instant had already passed, so it fires at once. */
  firesImmediately: z.boolean().optional(),
  /** A debounced job (docs/flow-control.md): its debounce and how many later creates it folded; null
   *  for any other job. */
  debounce: z
    .strictObject({
      key: z.string(),
      periodMs: z.number().int(),
      maxWaitMs: z.number().int().nullable(),
      mode: z.enum(["trailing", "leading"]),
      folded: z.number().int(),
    })
    .nullable(),
  /** On a create with debounce: the job it joined (200), or null for a new job (201); folded so far. */
  debounced: z.strictObject({ joined: id.nullable(), folded: z.number().int() }).optional(),
  createdAt: iso,
  updatedAt: iso,
});

export const attemptResponse = z.strictObject({
  attempt: z.number().int(),
  startedAt: iso,
  durationMs: z.number(),
  outcome: z.enum([
    "success",
    "http_error",
    "network_error",
    "timeout",
    "handler_error",
    "lease_expired",
    "secret_missing",
    "forbidden_target",
    "lost_in_flight",
    "cancelled",
  ]),
  httpStatus: z.number().int().nullable(),
  error: z.string().nullable(),
  responseBody: z.string().nullable(),
  /** As sent, secrets as their `${secrets.NAME}` placeholders; null for a handler, or before sending. */
  request: z
    .strictObject({
      method: z.string(),
      url: z.string(),
      headers: z.record(z.string(), z.string()),
      body: z.string().nullable(),
      truncated: z.literal(true).optional(),
    })
    .nullable(),
  response: z
    .strictObject({
      status: z.number().int(),
      headers: z.record(z.string(), z.string()),
      body: z.string(),
      truncated: z.boolean(),
    })
    .nullable(),
});

export const triggerResponse = z.strictObject({
  id,
  jobId: id,
  /** Its job's fairness key when it was made; null: none. */
  key: z.string().nullable(),
  kind: z.enum(["scheduled", "manual", "backfill", "rerun"]),
  triggeredBy: z.enum(["schedule", "manual", "replay", "backfill", "rerun"]),
  /** The backfill that made it (kind backfill); null otherwise. */
  backfillId: id.nullable(),
  /** The finished trigger it re-runs (kind rerun); null otherwise. */
  rerunOf: id.nullable(),
  scheduledFor: iso,
  status: z.enum(["pending", "running", "succeeded", "dead", "skipped", "cancelled", "unknown"]),
  reason: z.string().nullable(),
  attemptCount: z.number().int(),
  maxAttempts: z.number().int(),
  nextAttemptAt: iso.nullable(),
  createdAt: iso,
  finishedAt: iso.nullable(),
  /** GET /v1/triggers/{id} and replay: every attempt, oldest first. */
  attempts: z.array(attemptResponse).optional(),
});

/** POST /v1/jobs/batch: one result per item, in input order. */
export const jobBatchResponse = z.strictObject({
  results: z.array(
    z.union([
      /** 201: created; 200: the job its idempotencyKey already made (the same body). */
      z.strictObject({ index: z.number().int(), status: z.union([z.literal(200), z.literal(201)]), job: jobResponse }),
      /** Refused, as a single create would be (400, 409, 413): nothing written for it. */
      z.strictObject({ index: z.number().int(), status: z.number().int(), error: errorResponse.shape.error }),
    ]),
  ),
});

export const deadLetterResponse = triggerResponse.extend({
  jobName: z.string(),
  jobType: z.string(),
  lastAttempt: z
    .strictObject({ outcome: z.string(), httpStatus: z.number().int().nullable(), error: z.string().nullable() })
    .nullable(),
});

export const replayDeadLettersResponse = z.strictObject({
  jobId: id,
  /** How many dead letters this call replayed (at most 100), oldest first, and their trigger ids. */
  replayed: z.number().int(),
  triggerIds: z.array(z.string()),
  /** How many the job still has: call again while this is above 0. */
  remaining: z.number().int(),
});

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.strictObject({ data: z.array(item), nextCursor: z.string().nullable() });

export const quotaResponse = z.strictObject({
  limits: z.strictObject(quotaFields),
  usage: z.strictObject(usageFields),
});

export const healthResponse = z.union([
  z.strictObject({ status: z.literal("ok") }),
  z.strictObject({ status: z.literal("degraded"), database: z.literal("unreachable") }),
]);

export const readinessResponse = z.strictObject({
  status: z.enum(["ready", "not_ready"]),
  database: z.enum(["ok", "unreachable"]),
  /** This process's executor: absent when it runs none (FAIRWAY_ROLE=api, a Worker's fetch). */
  executor: z.enum(["ok", "stalled", "absent"]),
  /** Why it is not ready, in a sentence. */
  reason: z.string().optional(),
});

const notificationEvent = z.enum(["trigger.dead", "job.paused", "job.recovered", "tenant.quota_exhausted"]);

/** A notification channel (a Slack URL shows only its origin: it is a credential). */
export const channelResponse = z.strictObject({
  id,
  type: z.enum(["webhook", "slack", "email"]),
  url: z.string().optional(),
  to: z.string().optional(),
  /** null: every event. */
  events: z.array(notificationEvent).nullable(),
  windowSeconds: z.number().int(),
  createdAt: iso,
});

export const notificationResponse = z.strictObject({
  id,
  channelId: id,
  channelType: z.enum(["webhook", "slack", "email"]),
  event: z.union([notificationEvent, z.literal("notification.test")]),
  jobId: id.nullable(),
  /** Events of this job and type the channel's window folded since the previous notification. */
  folded: z.number().int(),
  data: z.record(z.string(), z.unknown()),
  /** pending (queued or being sent, retried on failure), sent, failed (every attempt failed), cancelled. */
  status: z.enum(["pending", "sent", "failed", "cancelled"]),
  attempts: z.number().int(),
  createdAt: iso,
  finishedAt: iso.nullable(),
});

/** A key policy: the tenant's defaults, or what is in force for one key. null: no cap, no rate. */
export const keyPolicyResponse = z.strictObject({
  maxInFlight: z.number().int().nullable(),
  ratePerSecond: z.number().nullable(),
  weight: z.number(),
});

/** One fairness key of a tenant: its override (null: the defaults apply), the policy in force, and now. */
export const keyInfoResponse = z.strictObject({
  key: z.string(),
  override: z
    .strictObject({
      maxInFlight: z.number().int().nullable().optional(),
      ratePerSecond: z.number().nullable().optional(),
      weight: z.number().optional(),
    })
    .nullable(),
  policy: keyPolicyResponse,
  running: z.number().int(),
  due: z.number().int(),
  oldestDueLagMs: z.number().int().nullable(),
  /** Of the tenant's recent worker time, the part this key's runs took (0 to 1). */
  workerTimeShare: z.number(),
});

/** A backfill of a cron job (docs/flow-control.md): its range, and its triggers counted by status. */
export const backfillResponse = z.strictObject({
  id,
  jobId: id,
  from: iso,
  to: iso,
  overlap: z.enum(["skip", "allow"]),
  /** Fires in [from, to). */
  fires: z.number().int(),
  /** Of those, left out by overlap "skip" (the job already had a trigger at that instant). */
  skipped: z.number().int(),
  /** Its triggers by status: pending, running, succeeded, dead, unknown, cancelled. */
  counts: z.record(z.string(), z.number().int()),
  cancelledAt: iso.nullable(),
  createdAt: iso,
  /** DELETE: how many of its triggers this request cancelled. */
  cancelled: z.number().int().optional(),
});
