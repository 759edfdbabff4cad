// Form bodies, validated with zod. Browsers send every field as text: an empty optional field means
// "no limit" (null), numbers are coerced, and the bounds are the admin API's.
import { TENANT_BOUNDS as B } from "@fairway/core";
import { z } from "zod";

const optionalNumber = <T extends z.ZodType>(inner: T) =>
  z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? null : typeof v === "string" ? Number(v) : v),
    inner.nullable(),
  );

export const quotaForm = z.object({
  maxInFlight: z.coerce.number().int().min(B.maxInFlight.min).max(B.maxInFlight.max),
  weight: z.coerce.number().min(B.weight.min).max(B.weight.max),
  ratePerSecond: optionalNumber(z.number().min(B.ratePerSecond.min).max(B.ratePerSecond.max)),
  burst: optionalNumber(z.number().int().min(B.burst.min).max(B.burst.max)),
  maxJobs: z.coerce.number().int().min(0).max(10_000_000),
  maxPayloadBytes: z.coerce.number().int().min(0).max(10_485_760),
});

export const statusForm = z.object({ status: z.enum(["active", "suspended"]) });

export const scheduleForm = z.object({
  cron: z.string().trim().min(1, "enter a cron expression, e.g. 0 9 * * 1-5").max(200),
  timezone: z.string().trim().min(1).max(64).default("UTC"),
});

export const loginForm = z.object({ token: z.string().min(1, "enter the admin token").max(500) });

export const jobsQuery = z.object({
  q: z
    .string()
    .trim()
    .max(200)
    .optional()
    .transform((v) => v || undefined),
  status: z
    .enum(["", "active", "paused", "completed", "cancelled"])
    .optional()
    .transform((v) => (v ? v : undefined)),
  after: z.string().max(100).optional(),
});

export const PAGE_SIZE = 50;

/** The first message of a zod error, with its field. */
export function firstIssue(err: z.ZodError): string {
  const i = err.issues[0];
  return i ? `${i.path.join(".") || "form"}: ${i.message}` : "invalid input";
}
