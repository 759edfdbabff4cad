// Turns a validated request body into a job row: semantic checks zod cannot do (strict cron, IANA
// zone, SSRF-safe target, payload size) and defaults from the job's pool.
import { checkTargetUrl, nextFires, parseCron, validateTimezone } from "@fairway/core";
import type { JobPatch, JobRow, NewJob, PoolConfig, TenantRow } from "@fairway/store";
import { ApiError } from "./errors.ts";
import type { CreateJobBody, Schedule } from "./schemas.ts";

export function resolveSchedule(s: Schedule, now: Date): { cron: string | null; timezone: string | null; runAt: Date | null; nextFireAt: Date } {
  if ("cron" in s) {
    const parsed = parseCron(s.cron);
    if (!parsed.ok) throw new ApiError(400, "invalid_cron", `schedule.cron: ${parsed.message}`);
    if (!validateTimezone(s.timezone)) {
      throw new ApiError(400, "invalid_timezone", `schedule.timezone: "${s.timezone}" is not an IANA time zone (e.g. "Europe/Berlin")`);
    }
    const [next] = nextFires(parsed.expr, s.timezone, now, 1);
    if (!next) throw new ApiError(400, "invalid_cron", "schedule.cron: the expression never fires");
    return { cron: parsed.expr, timezone: s.timezone, runAt: null, nextFireAt: next };
  }
  const at = "at" in s ? new Date(s.at) : new Date(now.getTime() + s.delayMs);
  return { cron: null, timezone: null, runAt: at, nextFireAt: at };
}

export function checkTarget(target: CreateJobBody["target"], allowPrivate: boolean) {
  if (!target) return null;
  const r = checkTargetUrl(target.url, { allowPrivate });
  if (!r.ok) {
    const hint = r.code === "forbidden_target"
      ? "; use a public address, or for local testing start the server with FAIRWAY_ALLOW_PRIVATE_TARGETS=true"
      : "";
    throw new ApiError(400, r.code, `target.url: ${r.message}${hint}`);
  }
  return { url: r.url.toString(), method: target.method, ...(target.headers ? { headers: target.headers } : {}) };
}

export function payloadBytes(payload: unknown): number {
  return payload === undefined ? 0 : new TextEncoder().encode(JSON.stringify(payload)).byteLength;
}

export function checkPayload(payload: unknown, tenant: TenantRow): void {
  const size = payloadBytes(payload);
  if (size > tenant.maxPayloadBytes) {
    throw new ApiError(413, "payload_too_large", `payload is ${size} bytes; this tenant's limit is ${tenant.maxPayloadBytes}`);
  }
}

export function buildJob(
  id: string,
  body: CreateJobBody,
  tenant: TenantRow,
  pool: PoolConfig,
  opts: { now: Date; allowPrivate: boolean; handlerTypes: ReadonlySet<string> },
): NewJob {
  const target = checkTarget(body.target, opts.allowPrivate);
  if (!target && !opts.handlerTypes.has(body.type)) {
    throw new ApiError(400, "validation_error", `target: required (no in-process handler is registered for type "${body.type}")`);
  }
  checkPayload(body.payload, tenant);
  const when = resolveSchedule(body.schedule, opts.now);
  return {
    id,
    tenantId: tenant.id,
    name: body.name,
    type: body.type,
    ...when,
    target,
    payload: body.payload ?? null,
    maxAttempts: body.retry?.maxAttempts ?? pool.maxAttempts,
    initialDelayMs: body.retry?.initialDelayMs ?? pool.initialDelayMs,
    maxDelayMs: body.retry?.maxDelayMs ?? pool.maxDelayMs,
    timeoutMs: body.timeoutMs ?? null,
    priority: body.priority ?? 0,
    overlap: body.overlap ?? "allow",
    misfire: body.misfire ?? "fire_once",
    catchupWindowMs: body.catchupWindowMs ?? 86_400_000,
  };
}

/** A stored job as the create body that would make it: the base a merge patch applies to. Null
 *  columns are left out, as a create would leave them out. */
export function jobAsBody(j: JobRow): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: j.name,
    type: j.type,
    schedule: j.cron ? { cron: j.cron, timezone: j.timezone ?? "UTC" } : { at: j.runAt!.toISOString() },
    retry: { maxAttempts: j.maxAttempts, initialDelayMs: j.initialDelayMs, maxDelayMs: j.maxDelayMs },
    priority: j.priority,
    overlap: j.overlap,
    misfire: j.misfire,
    catchupWindowMs: j.catchupWindowMs,
  };
  if (j.target) body.target = structuredClone(j.target);
  if (j.payload !== null && j.payload !== undefined) body.payload = structuredClone(j.payload);
  if (j.timeoutMs !== null) body.timeoutMs = j.timeoutMs;
  return body;
}

/** A schedule patch that names another kind (`at` for a cron job) replaces the schedule rather than
 *  merging into it: `{"schedule": {"at": "…"}}` must not fail for also having the old cron. Within one
 *  kind it merges, so changing `cron` keeps `timezone`. */
export function scheduleBase(j: JobRow, patchSchedule: unknown): Record<string, unknown> | null {
  if (patchSchedule === null || typeof patchSchedule !== "object" || Array.isArray(patchSchedule)) return null;
  const p = patchSchedule as Record<string, unknown>;
  const current = j.cron ? "cron" : "at";
  const named = (["cron", "at", "delayMs"] as const).filter((k) => p[k] !== undefined && p[k] !== null);
  return named.length > 0 && !named.includes(current) ? {} : null;
}

/** The columns a merge patch changes: only those under the top-level fields it names, so an untouched
 *  schedule is not re-planned and an untouched retry policy does not rewrite pending triggers. */
export function jobPatchOf(built: NewJob, fields: string[]): JobPatch {
  const out: JobPatch = {};
  const take = (...keys: Array<keyof JobPatch>) => {
    for (const k of keys) (out as Record<string, unknown>)[k] = built[k as keyof NewJob];
  };
  for (const f of fields) {
    if (f === "schedule") take("cron", "timezone", "runAt", "nextFireAt");
    else if (f === "retry") take("maxAttempts", "initialDelayMs", "maxDelayMs");
    else if (["name", "target", "payload", "timeoutMs", "priority", "overlap", "misfire", "catchupWindowMs"].includes(f)) {
      take(f as keyof JobPatch);
    }
  }
  return out;
}

/** 409 for a job that exists but can no longer change: the code names why. */
export function notLive(j: Pick<JobRow, "id" | "status">, action: string): ApiError {
  if (j.status === "completed") {
    return new ApiError(409, "job_completed", `job ${j.id} is completed (a one-time job that has fired) and cannot be ${action}; create a new job instead`);
  }
  return new ApiError(409, "job_cancelled", `job ${j.id} was cancelled (DELETE) and cannot be ${action}; create a new job instead`);
}

export const isLive = (j: Pick<JobRow, "status">) => j.status === "active" || j.status === "paused";
