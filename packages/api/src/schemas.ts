// Every API input, validated with zod (strict: unknown fields are errors, not silently dropped). Each
// message says what to send instead: a user reading `schedule: …` must not have to guess the shape.
import {
  PORTAL_LINK_DEFAULT_TTL_S,
  PORTAL_LINK_MAX_TTL_S,
  PORTAL_LINK_MIN_TTL_S,
  DEBOUNCE_BOUNDS,
  SECRET_NAME,
  TENANT_BOUNDS,
} from "@fairway/core";
import { NOTIFICATION_EVENTS } from "@fairway/store";
import { z } from "zod";

const DAY = 86_400_000;
const slug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "must be 1-63 characters: a-z, 0-9, _ or -, starting with a letter or digit");
export const poolType = z
  .string()
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/, "must be 1-63 characters: letters, digits, _ . or -");

/** zod's default wording for a missing or mistyped value, replaced by what to send. */
const expected = (what: string) => ({
  error: (iss: { input?: unknown }) => (iss.input === undefined ? `required: ${what}` : `must be ${what}`),
});
const int = (what: string) => z.number(expected(what)).int(`must be a whole number (${what})`);
const text = (what: string) => z.string(expected(what));
/** The first few unknown keys, each cut short: the message stays small whatever the body held. */
function namedKeys(keys: readonly PropertyKey[]): string {
  const shown = keys.slice(0, 5).map((k) => JSON.stringify(String(k).slice(0, 40)));
  return keys.length > 5 ? `${shown.join(", ")} and ${keys.length - 5} more` : shown.join(", ");
}
/** Unknown keys name themselves and the keys that are allowed. */
const strict = <S extends z.ZodRawShape>(shape: S, what = "an object") =>
  z.strictObject(shape, {
    error: (iss) => {
      if (iss.code === "unrecognized_keys") {
        return `unknown field${iss.keys.length > 1 ? "s" : ""} ${namedKeys(iss.keys)}; allowed: ${Object.keys(shape).join(", ")}`;
      }
      return iss.input === undefined ? `required: ${what}` : `must be ${what}`;
    },
  });

/** Headers Fairway sets itself, and why each may not be overridden. */
const RESERVED_HEADERS: Array<[RegExp, string]> = [
  [
    /^(webhook-id|webhook-timestamp|webhook-signature)$/i,
    "it carries the Standard Webhooks signature Fairway computes",
  ],
  [/^webhook-/i, "the webhook- prefix is reserved for Standard Webhooks headers"],
  [/^fairway-/i, "the fairway- prefix is reserved for Fairway's delivery headers"],
  [/^(host|content-length|connection|transfer-encoding)$/i, "it is set by the HTTP client from the URL and the body"],
  // What the transport (undici) refuses to send or manages itself: every attempt would fail.
  [
    /^(keep-alive|upgrade|expect|te|trailer|proxy-connection|http2-settings)$/i,
    "it controls the connection, which the HTTP client manages; it can never be sent",
  ],
  [/^user-agent$/i, "Fairway identifies itself as the sender"],
];

function reservedHeaderReason(name: string): string | null {
  return RESERVED_HEADERS.find(([re]) => re.test(name))?.[1] ?? null;
}

const headerName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be a valid header name (letters, digits and !#$%&'*+.^_`|~-)");
/** A header named `__proto__` would be dropped by the record (an assignment to it sets the
 *  prototype), so the job would save without it: refused instead, on the input. */
const noProtoKey = (v: unknown, ctx: z.core.$RefinementCtx) => {
  if (v !== null && typeof v === "object" && Object.hasOwn(v, "__proto__")) {
    ctx.addIssue({
      code: "custom",
      path: ["__proto__"],
      message: 'header name "__proto__" cannot be stored; use another name',
    });
  }
  return v;
};
const headerRecord = z
  .record(
    z.string(),
    // What Node and undici accept in a header value (no line breaks, NUL or other control characters):
    // anything else would be a delivery that can never be sent.
    text("a header value string")
      .max(1000)
      .regex(/^[\t\x20-\x7e\x80-\xff]*$/, "must not contain line breaks or control characters"),
    expected('an object of header names to values, e.g. {"authorization": "Bearer …"}'),
  )
  .superRefine((h, ctx) => {
    for (const name of Object.keys(h)) {
      const bad = headerName.safeParse(name);
      if (!bad.success)
        ctx.addIssue({ code: "custom", path: [name], message: `header name ${bad.error.issues[0].message}` });
      const why = reservedHeaderReason(name);
      if (why)
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: `"${name}" is reserved and cannot be set: ${why}; remove it`,
        });
    }
    if (Object.keys(h).length > 20) ctx.addIssue({ code: "custom", message: "at most 20 headers" });
  });
const headers = z.preprocess(noProtoKey, headerRecord);

/** Any JSON value. One instance, so the OpenAPI document names it once (components.ts) instead of
 *  repeating its recursion. */
export const jsonValue = z.json();

const HTTP_METHODS = ["POST", "PUT", "PATCH", "GET", "HEAD", "DELETE"] as const;
const target = strict({
  url: text('an absolute http(s) URL, e.g. "https://example.com/hook"').min(1).max(2048),
  method: z.enum(HTTP_METHODS, { error: `must be one of ${HTTP_METHODS.join(", ")}` }).default("POST"),
  headers: headers.optional(),
  // Sent verbatim: a string as is, any other JSON value as JSON (job-input.ts checks method and size).
  body: z.union([z.string(), jsonValue]).optional(),
});

const SCHEDULE_KINDS = "give exactly one of cron, at or delayMs";
const scheduleFields = strict(
  {
    cron: text('a cron expression, e.g. "*/5 * * * *"').max(200).optional(),
    timezone: text('an IANA time zone, e.g. "Europe/Berlin"').max(64).optional(),
    at: z.iso
      .datetime({ offset: true, error: 'must be an ISO-8601 date-time with a zone, e.g. "2030-01-01T09:00:00Z"' })
      .optional(),
    delayMs: int("a number of milliseconds, e.g. 5000 (not a string)")
      .min(0)
      .max(366 * DAY, "at most 366 days")
      .optional(),
    spread: text('an ISO 8601 duration, e.g. "PT10M"').max(32).optional(),
  },
  `an object: ${SCHEDULE_KINDS}, e.g. {"cron": "0 9 * * *", "timezone": "Europe/Berlin"}`,
);

const backoff = z.enum(["exponential", "linear", "fixed"], { error: "must be exponential, linear or fixed" });
const jitter = z.enum(["full", "none"], { error: "must be full or none" });

export type Schedule = { cron: string; timezone: string; spread?: string } | { at: string } | { delayMs: number };

/** One of three shapes. Parsed as one object so the message can say which fields clash or are missing,
 *  rather than a union's bare "Invalid input". */
const schedule = scheduleFields
  .superRefine((s, ctx) => {
    const given = (["cron", "at", "delayMs"] as const).filter((k) => s[k] !== undefined);
    if (given.length !== 1) {
      const got = given.length === 0 ? "none" : given.join(" and ");
      ctx.addIssue({ code: "custom", message: `${SCHEDULE_KINDS} (got ${got})` });
    } else if (s.timezone !== undefined && given[0] !== "cron") {
      ctx.addIssue({
        code: "custom",
        path: ["timezone"],
        message: `only goes with cron; ${given[0]} is an absolute instant, so remove timezone`,
      });
    } else if (s.spread !== undefined && given[0] !== "cron") {
      ctx.addIssue({
        code: "custom",
        path: ["spread"],
        message: `only goes with cron; ${given[0]} is one instant, so remove spread`,
      });
    }
  })
  .transform((s): Schedule => {
    if (s.cron !== undefined) {
      return { cron: s.cron, timezone: s.timezone ?? "UTC", ...(s.spread !== undefined ? { spread: s.spread } : {}) };
    }
    if (s.at !== undefined) return { at: s.at };
    return { delayMs: s.delayMs! };
  });

const retry = strict({
  maxAttempts: int("a number of attempts, 1-100").min(1).max(100).optional(),
  initialDelayMs: int("a delay in milliseconds").min(0).max(DAY).optional(),
  maxDelayMs: int("a delay in milliseconds")
    .min(0)
    .max(7 * DAY)
    .optional(),
  backoff: backoff.optional(),
  jitter: jitter.optional(),
});

export const ON_BUSY = ["queue", "skip", "replace_queued", "cancel_running"] as const;

const policies = {
  timeoutMs: int("a timeout in milliseconds, 100-900000").min(100).max(900_000).optional(),
  priority: int("an integer from -100 to 100").min(-100).max(100).optional(),
  overlap: z.enum(["allow", "skip", "buffer_one"], { error: "must be one of allow, skip, buffer_one" }).optional(),
  misfire: z.enum(["fire_once", "skip", "fire_all"], { error: "must be one of fire_once, skip, fire_all" }).optional(),
  /** What a due trigger does while the job's key is at its cap (docs/fairness.md, "onBusy"); needs a key. */
  onBusy: z.enum(ON_BUSY, { error: `must be one of ${ON_BUSY.join(", ")}` }).optional(),
  catchupWindowMs: int("a window in milliseconds")
    .min(0)
    .max(31 * DAY)
    .optional(),
  /** at_most_once: never sent twice; a delivery that may have reached the target ends `unknown`. */
  delivery: z.enum(["at_least_once", "at_most_once"], { error: "must be at_least_once or at_most_once" }).optional(),
};

/** Which notification channels hear about a job: false for none; absent for all of the tenant's. */
const notify = z.union(
  [
    z.literal(false),
    strict(
      { channels: z.array(z.string().min(1).max(100)).min(1, "name at least one channel id").max(20, "at most 20") },
      'false, or {"channels": ["<channel id>", …]}',
    ),
  ],
  { error: 'must be false, or {"channels": ["<channel id>", …]} (POST /v1/notification-channels gives ids)' },
);

/** A fairness key (docs/fairness.md): 1-128 characters (code points), none a control character (Cc:
 *  C0, DEL and C1), compared byte for byte. */
const KEY_RE = /^\P{Cc}{1,128}$/u;
const KEY_WHAT = 'a string of 1-128 characters without control characters, e.g. "customer-42"';
/** `.` and `..` are path segments a URL resolves away: such a key could never be read at
 *  /v1/keys/{key}. */
export const fairnessKey = text(KEY_WHAT)
  .regex(KEY_RE, `must be ${KEY_WHAT}`)
  .refine((k) => k !== "." && k !== "..", {
    message:
      'must not be "." or ".." (a URL resolves them away, so /v1/keys/{key} could not name it); choose another key',
  });

const DB = DEBOUNCE_BOUNDS;
/** Debounce (docs/flow-control.md): one-time jobs with the same key fold into one pending job. */
const debounce = strict(
  {
    key: text(KEY_WHAT).regex(KEY_RE, `must be ${KEY_WHAT}`),
    periodMs: int(`a quiet period in milliseconds, ${DB.periodMs.min}-${DB.periodMs.max}`)
      .min(DB.periodMs.min)
      .max(DB.periodMs.max),
    maxWaitMs: int(`a cap in milliseconds, ${DB.maxWaitMs.min}-${DB.maxWaitMs.max}, at least periodMs`)
      .min(DB.maxWaitMs.min)
      .max(DB.maxWaitMs.max)
      .optional(),
    /** trailing (default): fire once, periodMs after the latest create. leading: fire at the first
     *  create, and fold the creates within periodMs of the latest one into it without firing again. */
    mode: z.enum(["trailing", "leading"], { error: "must be trailing or leading" }).optional(),
  },
  '{"key": "<debounce key>", "periodMs": <ms>, "maxWaitMs"?: <ms>, "mode"?: "trailing" | "leading"}',
).refine((d) => d.maxWaitMs === undefined || d.maxWaitMs >= d.periodMs, {
  path: ["maxWaitMs"],
  message:
    "must be at least periodMs (trailing: the job fires periodMs after the latest create, at most maxWaitMs after the first; leading: creates fold in for at most maxWaitMs after the first)",
});

/** Tags: the tenant's own labels on a job, { name: value }, filtered on by GET /v1/jobs?tag=name:value. */
export const TAG_NAME_RE = /^[a-z0-9_.:-]{1,64}$/;
const TAG_LIMIT = 10;
const tags = z
  .record(
    z.string().regex(TAG_NAME_RE, "a tag name is 1-64 characters of a-z, 0-9, _ . : -"),
    z.string({ error: "a tag value is a string" }).max(256, "a tag value is at most 256 characters"),
    { error: 'must be an object of tag names to string values, e.g. {"env": "prod"}' },
  )
  .refine((t) => Object.keys(t).length <= TAG_LIMIT, `at most ${TAG_LIMIT} tags`);

export const createJobBody = strict({
  name: text("a job name string").min(1, "must not be empty").max(200),
  type: poolType
    .refine((t) => !t.startsWith("fairway."), 'the "fairway." prefix is reserved for Fairway\'s own pools')
    .default("webhook"),
  schedule,
  target: target.optional(),
  payload: z.unknown().optional(),
  retry: retry.optional(),
  ...policies,
  notify: notify.optional(),
  /** Shares and limits inside the tenant are per key; absent: the job has none (tenant-level only). */
  key: fairnessKey.optional(),
  /** One-time jobs only: creates with the same key within periodMs fold into one job. */
  debounce: debounce.optional(),
  /** At most 10 { name: value }; a PATCH merges them (null removes one). */
  tags: tags.optional(),
});
export type CreateJobBody = z.infer<typeof createJobBody>;

/** PATCH /v1/jobs/:id, for the OpenAPI document: a JSON Merge Patch of the create body (any field, null
 *  clears). Requests are checked by merging into the job and parsing the result with createJobBody. */
export const updateJobBody = z.object(createJobBody.shape).partial();

const B = TENANT_BOUNDS;
const quota = {
  maxInFlight: int("a number of concurrent deliveries, 1-100000").min(B.maxInFlight.min).max(B.maxInFlight.max),
  weight: z
    .number(expected(`a number from ${B.weight.min} to ${B.weight.max}`))
    .min(B.weight.min, `must be at least ${B.weight.min}`)
    .max(B.weight.max, `must be at most ${B.weight.max}`),
  ratePerSecond: z
    .number(expected(`a number from ${B.ratePerSecond.min} to ${B.ratePerSecond.max}, or null for no rate limit`))
    .min(B.ratePerSecond.min, `must be at least ${B.ratePerSecond.min} (or null for no rate limit)`)
    .max(B.ratePerSecond.max, `must be at most ${B.ratePerSecond.max}`)
    .nullable(),
  burst: int("a bucket size, or null for max(1, ratePerSecond)").min(B.burst.min).max(B.burst.max).nullable(),
  maxJobs: int("a number of live jobs").min(0).max(10_000_000),
  maxPayloadBytes: int("a size in bytes").min(0).max(10_485_760),
  // History retention (docs/operations.md): finished triggers and jobs, and dead ones.
  historyRetentionDays: int("a number of days, 1-3650").min(1).max(3650),
  deadRetentionDays: int("a number of days, 1-3650").min(1).max(3650),
  // Auto-pause: a job whose last this-many triggers all dead-lettered is paused; 0 = never.
  consecutiveFailureLimit: int("a number of dead triggers in a row, 0-10000 (0 = never auto-pause)").min(0).max(10_000),
};

const optionalQuotas = z.object(quota).partial().shape;

/** A plan's id, as a tenant names it (POST /v1/admin/plans made it). */
const planRef = slug;

/** The quota values a tenant sets itself win over its plan's; the others take the plan's, else the
 *  default (docs/plans.md). */
export const createTenantBody = strict({
  id: slug.optional(),
  name: text("a tenant name string").min(1, "must not be empty").max(200),
  plan: planRef.optional(),
  ...optionalQuotas,
});

/** The fields a tenant may leave to its plan: null in a PATCH removes the tenant's own value. */
const PLANNED = [
  "maxInFlight",
  "weight",
  "ratePerSecond",
  "burst",
  "maxJobs",
  "maxPayloadBytes",
  "historyRetentionDays",
] as const;
const nullablePlanned = Object.fromEntries(PLANNED.map((f) => [f, quota[f].nullable()])) as {
  [K in (typeof PLANNED)[number]]: z.ZodNullable<(typeof quota)[K]>;
};

/** PATCH /v1/admin/tenants/:id, for the OpenAPI document (a merge patch; see tenantState). */
export const updateTenantBody = z
  .object({
    name: z.string().min(1).max(200),
    status: z.enum(["active", "suspended"]),
    plan: planRef.nullable(),
    ...quota,
    ...nullablePlanned,
  })
  .partial();

/** A whole tenant as PATCH sees it after merging: its own quota values (absent: its plan's or the
 *  default applies) and the fields that cannot be cleared. */
export const tenantState = strict({
  name: text("a tenant name string (it cannot be cleared)").min(1, "must not be empty").max(200),
  status: z.enum(["active", "suspended"], { error: "must be active or suspended" }),
  plan: planRef.optional(),
  ...quota,
  ...z
    .object(Object.fromEntries(PLANNED.map((f) => [f, quota[f]])) as Pick<typeof quota, (typeof PLANNED)[number]>)
    .partial().shape,
});

export const putPoolBody = strict({
  concurrency: int("a number of concurrent runs, 1-10000").min(1).max(10_000),
  timeoutMs: int("a timeout in milliseconds, 100-900000").min(100).max(900_000),
  leaseMs: int("a lease in milliseconds, 1000-3600000").min(1000).max(3_600_000).optional(),
  ...retry.shape,
  /** Response bytes kept per attempt. Default 64 KiB, at most 1 MiB. */
  maxResponseBytes: int("a number of bytes, 0-1048576").min(0).max(1_048_576).optional(),
});

export const secretName = z
  .string()
  .regex(SECRET_NAME, "must be 1-64 characters: A-Z, 0-9 or _, starting with a letter A-Z");
export const putSecretBody = z.strictObject({
  value: z
    .string()
    .min(1)
    .max(8192)
    .regex(/^[^\0]*$/, "must not contain NUL characters"),
});

const ttlRange = `a number of seconds, ${PORTAL_LINK_MIN_TTL_S}-${PORTAL_LINK_MAX_TTL_S}; default ${PORTAL_LINK_DEFAULT_TTL_S}`;
export const portalLinkBody = z.strictObject({
  ttlSeconds: int(ttlRange)
    .min(PORTAL_LINK_MIN_TTL_S, `must be at least ${PORTAL_LINK_MIN_TTL_S} (${ttlRange})`)
    .max(PORTAL_LINK_MAX_TTL_S, `must be at most ${PORTAL_LINK_MAX_TTL_S} (${ttlRange})`)
    .default(PORTAL_LINK_DEFAULT_TTL_S),
});

const page = {
  limit: z.coerce.number(expected("a number from 1 to 200")).int().min(1).max(200, "at most 200").default(50),
  cursor: z.string().max(100).optional(),
};
export const pageQuery = strict(page);

const JOB_STATUSES = ["active", "paused", "completed", "failed", "cancelled"] as const;
export const jobListQuery = strict({
  ...page,
  status: z.enum(JOB_STATUSES, { error: `must be one of ${JOB_STATUSES.join(", ")}` }).optional(),
  type: poolType.optional(),
  name: z.string().min(1).max(200).optional(),
  key: fairnessKey.optional(),
  /** name:value (the first colon ends the name); repeat it for jobs with every one of the tags. */
  tag: z
    .string()
    .min(2, "write name:value, e.g. env:prod")
    .max(321, "a tag filter is at most 321 characters (a name of 64, a colon, a value of 256)")
    .optional(),
  /** true: only jobs whose latest fires ended dead (failureStreak > 0); false: only the others. */
  failing: z
    .enum(["true", "false"], { error: "must be true or false" })
    .transform((v) => v === "true")
    .optional(),
});

const instant = (what: string) =>
  z.iso.datetime({
    offset: true,
    error: `must be ${what}: an ISO-8601 date-time with a zone, e.g. "2026-01-01T00:00:00Z"`,
  });

/** POST /v1/jobs/:id/backfill. */
export const backfillBody = strict({
  from: instant("the range's start (inclusive)"),
  to: instant("the range's end (exclusive), not in the future"),
  /** skip (default): leave out fires the job already has a trigger for that ran, runs or will run. */
  overlap: z.enum(["skip", "allow"], { error: "must be skip or allow" }).default("skip"),
});

export const deadLetterQuery = strict({ ...page, jobId: z.string().max(100).optional() });
export const replayDeadLettersBody = z.strictObject({
  /** The job whose dead letters to replay, oldest first, at most 100 per call. */
  jobId: text('the id of the job whose dead letters to replay, e.g. {"jobId": "job_…"}')
    .min(1, 'must be a job id, e.g. {"jobId": "job_…"}')
    .max(100),
});
export const triggerListQuery = strict({ ...page, key: fairnessKey.optional() });
/** POST /v1/jobs/batch: each item a create body with an optional idempotencyKey, checked one by one
 *  (commands/job-batch.ts), so that a bad item is its own result, not the request's 400. */
export const createJobBatchBody = strict({
  jobs: z
    .array(z.record(z.string(), z.unknown(), { error: "each item is a create body: an object" }))
    .min(1, "send at least one job")
    .max(1000, "at most 1000 jobs per batch; send the rest in another"),
});
/** POST /v1/triggers/{id}/rerun: what the new trigger sends instead of its job's (that trigger only). */
export const rerunTriggerBody = strict({
  /** The envelope's payload. */
  payload: jsonValue.optional(),
  /** A request target's body (the job's target.body): text, or JSON. */
  body: z.union([z.string(), jsonValue]).optional(),
});

const channelCommon = {
  events: z
    .array(z.enum(NOTIFICATION_EVENTS, { error: `must be one of ${NOTIFICATION_EVENTS.join(", ")}` }))
    .min(1, "name at least one event, or leave events out for all of them")
    .optional(),
  /** At most one notification per job and event type in this window; the next one counts the folded. */
  windowSeconds: int("a number of seconds, 1-86400").min(1).max(86_400).default(900),
};
const channelUrl = text('an absolute https URL, e.g. "https://example.com/fairway-events"').min(1).max(2048);
export const createChannelBody = z.discriminatedUnion(
  "type",
  [
    strict({ type: z.literal("webhook"), url: channelUrl, ...channelCommon }),
    strict({ type: z.literal("slack"), url: channelUrl, ...channelCommon }),
    strict({ type: z.literal("email"), to: z.email({ error: "must be an email address" }).max(320), ...channelCommon }),
  ],
  { error: 'must have "type": "webhook" (with url), "slack" (with url) or "email" (with to)' },
);

export const notificationListQuery = strict({
  ...page,
  channelId: z.string().max(100).optional(),
  event: z.enum([...NOTIFICATION_EVENTS, "notification.test"]).optional(),
});

// Fairness keys' policy (docs/fairness.md). The bounds are the same in the API, the dashboard (which
// calls the API's functions) and the CLI (which sends to the API).
const keyCap = int("a number of concurrent runs, 1-100000, or null for no cap")
  .min(1, "must be at least 1 (or null for no cap)")
  .max(100_000, "must be at most 100000");
const keyRate = z
  .number(expected("a number of starts per second, 0.01-100000, or null for no rate limit"))
  .min(0.01, "must be at least 0.01 starts per second (or null for no rate limit)")
  .max(100_000, "must be at most 100000 starts per second");
const keyWeight = z
  .number(expected("a weight from 0.01 to 1000"))
  .min(0.01, "must be at least 0.01")
  .max(1000, "must be at most 1000");

/** PUT /v1/keys/{key}: the whole override. A field left out takes the tenant's default; null sets
 *  "no cap" or "no rate" for this key whatever the default. */
export const putKeyBody = strict(
  {
    maxInFlight: keyCap.nullable().optional(),
    ratePerSecond: keyRate.nullable().optional(),
    weight: z
      .number({
        error: (iss) =>
          iss.input === null
            ? "must be a weight from 0.01 to 1000; leave it out for the tenant's default"
            : "must be a weight from 0.01 to 1000",
      })
      .min(0.01, "must be at least 0.01")
      .max(1000, "must be at most 1000")
      .optional(),
  },
  'an object, e.g. {"maxInFlight": 2, "weight": 3}',
);

/** The tenant's key defaults after a merge patch. null (or absent) returns a field to its default:
 *  no cap, no rate, weight 1. */
export const keyDefaultsState = strict({
  maxInFlight: keyCap.nullable().optional(),
  ratePerSecond: keyRate.nullable().optional(),
  weight: keyWeight.nullable().optional(),
});

/** PATCH /v1/key-defaults, for the OpenAPI document (a merge patch; see keyDefaultsState). */
export const patchKeyDefaultsBody = z
  .object({ maxInFlight: keyCap.nullable(), ratePerSecond: keyRate.nullable(), weight: keyWeight.nullable() })
  .partial();

export const keyListQuery = strict({
  ...page,
  cursor: z.string().max(600).optional(),
});

/** A quota plan's fields (docs/plans.md): each optional, a tenant on the plan takes the default for one
 *  the plan leaves out. The bounds are a tenant's. */
const planFields = {
  name: text("a plan name string").min(1, "must not be empty").max(200),
  maxInFlight: quota.maxInFlight,
  weight: quota.weight,
  ratePerSecond: quota.ratePerSecond,
  burst: quota.burst,
  maxJobs: quota.maxJobs,
  maxPayloadBytes: quota.maxPayloadBytes,
  historyDays: quota.historyRetentionDays,
  keyDefaults: strict(
    { maxInFlight: keyCap.optional(), ratePerSecond: keyRate.optional(), weight: keyWeight.optional() },
    'an object of key defaults, e.g. {"maxInFlight": 2, "weight": 1}',
  ),
};

/** POST /v1/admin/plans, and a whole plan as PATCH sees it after merging. */
export const planState = strict({
  id: text('a plan id, e.g. "pro"').regex(
    /^[a-z0-9][a-z0-9_-]{0,62}$/,
    "must be 1-63 characters: a-z, 0-9, _ or -, starting with a letter or digit",
  ),
  ...z.object(planFields).partial().shape,
});

/** PATCH /v1/admin/plans/:id, for the OpenAPI document (a merge patch; see planState): null removes a
 *  value, and the plan's tenants take the default there. */
export const updatePlanBody = z
  .object({
    name: planFields.name.nullable(),
    maxInFlight: planFields.maxInFlight.nullable(),
    weight: planFields.weight.nullable(),
    ratePerSecond: planFields.ratePerSecond,
    burst: planFields.burst,
    maxJobs: planFields.maxJobs.nullable(),
    maxPayloadBytes: planFields.maxPayloadBytes.nullable(),
    historyDays: planFields.historyDays.nullable(),
    keyDefaults: z
      .object({ maxInFlight: keyCap.nullable(), ratePerSecond: keyRate.nullable(), weight: keyWeight.nullable() })
      .partial()
      .nullable(),
  })
  .partial();
