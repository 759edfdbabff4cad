// Form bodies. Browsers send every field as text: forms that change state become the API's shapes here
// (an empty optional limit means "no limit", null) and the command layer checks them.
import { z } from "zod";

const QUOTA_FIELDS = ["maxInFlight", "weight", "ratePerSecond", "burst", "maxJobs", "maxPayloadBytes"] as const;
const CLEARABLE: ReadonlySet<string> = new Set(["ratePerSecond", "burst"]);

/** The quota form's text as a merge patch for the tenant command: a number where the text is one, an
 *  empty rate or burst as null (no limit); anything else is passed as typed, for the command to refuse
 *  with the admin API's message. */
export function quotaPatch(form: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const k of QUOTA_FIELDS) {
    if (!(k in form)) continue;
    const v = typeof form[k] === "string" ? (form[k] as string).trim() : form[k];
    if (v === "" && CLEARABLE.has(k)) patch[k] = null;
    else if (typeof v === "string" && v !== "" && Number.isFinite(Number(v))) patch[k] = Number(v);
    else patch[k] = v;
  }
  return patch;
}

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
    .enum(["", "active", "paused", "completed", "failed", "cancelled"])
    .optional()
    .transform((v) => (v ? v : undefined)),
  /** name:value (the first colon ends the name): only jobs with that tag. */
  tag: z
    .string()
    .trim()
    .max(321)
    .optional()
    .transform((v) => v || undefined)
    .refine((v) => v === undefined || /^[a-z0-9_.:-]{1,64}:/.test(v), "tag: write name:value, e.g. env:prod"),
  /** true (the API's spelling; the checkbox sends it) or 1: only jobs whose latest fires ended dead. */
  failing: z
    .enum(["", "true", "1", "false", "0"], { error: "must be true or false" })
    .optional()
    .transform((v) => v === "true" || v === "1" || undefined),
  after: z.string().max(100).optional(),
});

export const PAGE_SIZE = 50;

/** The first message of a zod error, with its field. */
export function firstIssue(err: z.ZodError): string {
  const i = err.issues[0];
  return i ? `${i.path.join(".") || "form"}: ${i.message}` : "invalid input";
}
