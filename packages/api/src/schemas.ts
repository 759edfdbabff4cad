// Every API input, validated with zod (strict: unknown fields are errors, not silently dropped).
import { z } from "zod";

const DAY = 86_400_000;
export const slug = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "must be 1-63 characters: a-z, 0-9, _ or -, starting with a letter or digit");
export const poolType = z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/, "must be 1-63 characters: letters, digits, _ . or -");

const FORBIDDEN_HEADERS = /^(host|content-length|content-type|connection|transfer-encoding|user-agent|webhook-.*|fairway-.*)$/i;
const headers = z
  .record(
    z.string().min(1).max(100).regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be a valid header name")
      .refine((h) => !FORBIDDEN_HEADERS.test(h), "is set by Fairway and cannot be overridden"),
    // What Node and undici accept in a header value (no line breaks, NUL or other control characters):
    // anything else would be a delivery that can never be sent.
    z.string().max(1000).regex(/^[\t\x20-\x7e\x80-\xff]*$/, "must not contain line breaks or control characters"),
  )
  .refine((h) => Object.keys(h).length <= 20, "at most 20 headers");

export const target = z.strictObject({
  url: z.string().min(1).max(2048),
  method: z.enum(["POST", "PUT", "PATCH", "GET", "DELETE"]).default("POST"),
  headers: headers.optional(),
});

export const schedule = z.union([
  z.strictObject({ cron: z.string().max(200), timezone: z.string().max(64).default("UTC") }),
  z.strictObject({ at: z.iso.datetime({ offset: true }) }),
  z.strictObject({ delayMs: z.number().int().min(0).max(366 * DAY) }),
]);

export const retry = z.strictObject({
  maxAttempts: z.number().int().min(1).max(100).optional(),
  initialDelayMs: z.number().int().min(0).max(DAY).optional(),
  maxDelayMs: z.number().int().min(0).max(7 * DAY).optional(),
});

const policies = {
  timeoutMs: z.number().int().min(100).max(900_000).optional(),
  priority: z.number().int().min(-100).max(100).optional(),
  overlap: z.enum(["allow", "skip", "buffer_one"]).optional(),
  misfire: z.enum(["fire_once", "skip", "fire_all"]).optional(),
  catchupWindowMs: z.number().int().min(0).max(31 * DAY).optional(),
  /** at_most_once: never sent twice; a delivery that may have reached the target ends `unknown`. */
  delivery: z.enum(["at_least_once", "at_most_once"]).optional(),
};

export const createJobBody = z.strictObject({
  name: z.string().min(1).max(200),
  type: poolType.default("webhook"),
  schedule,
  target: target.optional(),
  payload: z.unknown().optional(),
  retry: retry.optional(),
  ...policies,
});
export type CreateJobBody = z.infer<typeof createJobBody>;

export const updateJobBody = z.strictObject({
  name: z.string().min(1).max(200).optional(),
  schedule: schedule.optional(),
  target: target.optional(),
  payload: z.unknown().optional(),
  retry: retry.optional(),
  ...policies,
});

const quota = {
  maxInFlight: z.number().int().min(1).max(100_000),
  weight: z.number().positive().max(10_000),
  ratePerSecond: z.number().positive().max(100_000).nullable(),
  burst: z.number().int().min(1).max(1_000_000).nullable(),
  maxJobs: z.number().int().min(0).max(10_000_000),
  maxPayloadBytes: z.number().int().min(0).max(10_485_760),
  // History retention (docs/operations.md): finished triggers and jobs, and dead ones.
  historyRetentionDays: z.number().int().min(1).max(3650),
  deadRetentionDays: z.number().int().min(1).max(3650),
};

const optionalQuotas = z.object(quota).partial().shape;

export const createTenantBody = z.strictObject({
  id: slug.optional(),
  name: z.string().min(1).max(200),
  ...optionalQuotas,
});

export const updateTenantBody = z.strictObject({
  name: z.string().min(1).max(200).optional(),
  status: z.enum(["active", "suspended"]).optional(),
  ...optionalQuotas,
});

export const putPoolBody = z.strictObject({
  concurrency: z.number().int().min(1).max(10_000),
  timeoutMs: z.number().int().min(100).max(900_000),
  leaseMs: z.number().int().min(1000).max(3_600_000).optional(),
  maxAttempts: z.number().int().min(1).max(100).optional(),
  initialDelayMs: z.number().int().min(0).max(DAY).optional(),
  maxDelayMs: z.number().int().min(0).max(7 * DAY).optional(),
});

export const pageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(100).optional(),
  jobId: z.string().max(100).optional(),
});
