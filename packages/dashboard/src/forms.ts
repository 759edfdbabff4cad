// Form bodies. Browsers send every field as text: forms that change state become the API's shapes here
// (an empty optional limit means "no limit", null) and the command layer checks them.
import { z } from "zod";

const QUOTA_FIELDS = ["maxInFlight", "weight", "ratePerSecond", "burst", "maxJobs", "maxPayloadBytes"] as const;
const PLAN_FIELDS = [...QUOTA_FIELDS, "historyDays"] as const;
const KEY_FIELDS = { keyMaxInFlight: "maxInFlight", keyRatePerSecond: "ratePerSecond", keyWeight: "weight" } as const;

/** A form field's text as the API's value: a number where the text is one, empty as null, anything
 *  else as typed (for the command to refuse with the admin API's message). */
function fieldValue(raw: unknown): unknown {
  const v = typeof raw === "string" ? raw.trim() : raw;
  if (v === "") return null;
  return typeof v === "string" && Number.isFinite(Number(v)) ? Number(v) : v;
}

/** The quota form's text as a merge patch for the tenant command: an empty field removes the tenant's
 *  own value (its plan's, else the default, applies: without a plan, an empty rate is no limit); the
 *  plan select's empty choice is no plan. */
export function quotaPatch(form: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const k of QUOTA_FIELDS) if (k in form) patch[k] = fieldValue(form[k]);
  if ("plan" in form) patch.plan = typeof form.plan === "string" && form.plan !== "" ? form.plan : null;
  return patch;
}

/** The plan form's text as the plan API's body: an empty field is one the plan leaves to the default
 *  (left out on create, null in a merge patch). */
export function planBody(form: Record<string, unknown>, mode: "create" | "patch"): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const put = (target: Record<string, unknown>, k: string, raw: unknown) => {
    const v = fieldValue(raw);
    if (v !== null || mode === "patch") target[k] = v;
  };
  if (mode === "create") out.id = typeof form.id === "string" ? form.id.trim() : form.id;
  if (typeof form.name === "string") {
    const name = form.name.trim();
    if (name !== "") out.name = name;
    else if (mode === "patch") out.name = null;
  }
  for (const k of PLAN_FIELDS) if (k in form) put(out, k, form[k]);
  const keys: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(KEY_FIELDS)) if (k in form) put(keys, f, form[k]);
  if (Object.keys(keys).length > 0) out.keyDefaults = keys;
  return out;
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
