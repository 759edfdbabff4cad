// Turns a validated request body into a job row: semantic checks zod cannot do (strict cron, IANA
// zone, SSRF-safe target, payload size) and defaults from the job's pool.
import {
  checkTargetUrl,
  formatSpread,
  maxSpreadMs,
  nextShiftedFires,
  parseCron,
  parseSpread,
  spreadOffsetMs,
  targetSecretRefs,
  validateTimezone,
} from "@fairway/core";
import {
  missingChannels,
  missingSecrets,
  type Db,
  type JobPatch,
  type JobRow,
  type NewJob,
  type PoolConfig,
  type TenantRow,
} from "@fairway/store";
import { ApiError } from "./errors.ts";
import type { CreateJobBody, Schedule } from "./schemas.ts";
import { retryJson } from "./serialize.ts";

/** `schedule.spread` in ms: a valid duration no longer than a day or the cron's shortest gap. */
function resolveSpread(spread: string | undefined, cron: string, timezone: string, now: Date): number | null {
  if (spread === undefined) return null;
  const parsed = parseSpread(spread);
  if (!parsed.ok) throw new ApiError(400, "invalid_spread", `schedule.spread: ${parsed.message}`);
  const max = maxSpreadMs(cron, timezone, now);
  if (parsed.ms > max) {
    throw new ApiError(
      400,
      "invalid_spread",
      `schedule.spread: "${spread}" is longer than ${formatSpread(max)}, the most this schedule allows (a day, and no more than the shortest gap between its fires); use a shorter window`,
    );
  }
  return parsed.ms;
}

function resolveSchedule(
  s: Schedule,
  now: Date,
  id: string,
): { cron: string | null; timezone: string | null; spreadMs: number | null; runAt: Date | null; nextFireAt: Date } {
  if ("cron" in s) {
    const parsed = parseCron(s.cron);
    if (!parsed.ok) throw new ApiError(400, "invalid_cron", `schedule.cron: ${parsed.message}`);
    if (!validateTimezone(s.timezone)) {
      throw new ApiError(
        400,
        "invalid_timezone",
        `schedule.timezone: "${s.timezone}" is not an IANA time zone (e.g. "Europe/Berlin")`,
      );
    }
    const spreadMs = resolveSpread(s.spread, parsed.expr, s.timezone, now);
    const [next] = nextShiftedFires(parsed.expr, s.timezone, now, 1, spreadOffsetMs(id, spreadMs));
    if (!next) throw new ApiError(400, "invalid_cron", "schedule.cron: the expression never fires");
    return { cron: parsed.expr, timezone: s.timezone, spreadMs, runAt: null, nextFireAt: next };
  }
  const at = "at" in s ? new Date(s.at) : new Date(now.getTime() + s.delayMs);
  return { cron: null, timezone: null, spreadMs: null, runAt: at, nextFireAt: at };
}

function checkTarget(target: CreateJobBody["target"], allowPrivate: boolean, maxBodyBytes = Infinity) {
  if (!target) return null;
  const url = checkUrl(target.url, allowPrivate);
  if (target.body !== undefined) {
    if (target.method === "GET" || target.method === "HEAD") {
      throw new ApiError(
        400,
        "body_not_allowed",
        `target.body: a ${target.method} request carries no body; remove target.body, or use POST, PUT, PATCH or DELETE`,
      );
    }
    const size =
      typeof target.body === "string" ? new TextEncoder().encode(target.body).byteLength : payloadBytes(target.body);
    if (size > maxBodyBytes)
      throw new ApiError(
        413,
        "payload_too_large",
        `target.body is ${size} bytes; this tenant's limit is ${maxBodyBytes}`,
      );
  }
  return {
    url,
    method: target.method,
    ...(target.headers ? { headers: target.headers } : {}),
    ...(target.body !== undefined ? { body: target.body } : {}),
  };
}

/** A URL naming a secret is stored as written (placeholders intact). Its parts around the placeholders
 *  are checked here with a stand-in value; one that starts with a placeholder (the whole URL is a
 *  secret, as a Slack webhook's is) can only be checked at delivery, which checks every URL again. */
export function checkUrl(raw: string, allowPrivate: boolean, field = "target.url"): string {
  const named = raw.includes("${secrets.");
  if (named && raw.startsWith("${secrets.")) return raw;
  const r = checkTargetUrl(named ? raw.replace(/\$\{secrets\.[A-Z][A-Z0-9_]*\}/g, "x") : raw, { allowPrivate });
  if (!r.ok) {
    const hint =
      r.code === "forbidden_target"
        ? "; use a public address, or for local testing start the server with FAIRWAY_ALLOW_PRIVATE_TARGETS=true"
        : "";
    throw new ApiError(400, r.code, `${field}: ${r.message}${hint}`);
  }
  return named ? raw : r.url.toString();
}

/** Every channel a job's `notify` names must be one of the tenant's. */
export async function checkNotifyChannels(db: Db, tenantId: string, notify: CreateJobBody["notify"]): Promise<void> {
  if (!notify) return;
  const missing = await missingChannels(db, tenantId, notify.channels);
  if (missing.length > 0) {
    throw new ApiError(
      400,
      "unknown_channel",
      `notify.channels: ${missing.join(", ")} is not a notification channel of this tenant; create one with POST /v1/notification-channels, or use an id from GET /v1/notification-channels`,
    );
  }
}

/** Every `${secrets.NAME}` a target names must exist when the job is saved. */
export async function checkSecretRefs(
  db: Db,
  tenantId: string,
  target: { url: string; headers?: Record<string, string>; body?: unknown } | null,
): Promise<void> {
  if (!target) return;
  const names = targetSecretRefs(target);
  if (names.size === 0) return;
  const missing = await missingSecrets(db, tenantId, [...names]);
  if (missing.length > 0) {
    throw new ApiError(
      400,
      "unknown_secret",
      `target names secret ${missing.join(", ")}, which this tenant does not have; create it first with PUT /v1/secrets/${missing[0]}`,
    );
  }
}

export function payloadBytes(payload: unknown): number {
  return payload === undefined ? 0 : new TextEncoder().encode(JSON.stringify(payload)).byteLength;
}

function checkPayload(payload: unknown, tenant: TenantRow): void {
  const size = payloadBytes(payload);
  if (size > tenant.maxPayloadBytes) {
    throw new ApiError(
      413,
      "payload_too_large",
      `payload is ${size} bytes; this tenant's limit is ${tenant.maxPayloadBytes}`,
    );
  }
}

export function buildJob(
  id: string,
  body: CreateJobBody,
  tenant: TenantRow,
  pool: PoolConfig,
  opts: { now: Date; allowPrivate: boolean; handlerTypes: ReadonlySet<string> },
): NewJob {
  const target = checkTarget(body.target, opts.allowPrivate, tenant.maxPayloadBytes);
  if (!target && !opts.handlerTypes.has(body.type)) {
    throw new ApiError(
      400,
      "validation_error",
      `target: required (no in-process handler is registered for type "${body.type}")`,
    );
  }
  checkPayload(body.payload, tenant);
  if (body.onBusy && body.onBusy !== "queue" && !body.key) {
    throw new ApiError(
      400,
      "validation_error",
      `onBusy: "${body.onBusy}" decides what a trigger does while its fairness key is at its cap, and this job has no key; give it a key (and the key a maxInFlight, PUT /v1/keys/{key}), or leave onBusy out`,
    );
  }
  const when = resolveSchedule(body.schedule, opts.now, id);
  return {
    id,
    tenantId: tenant.id,
    name: body.name,
    type: body.type,
    key: body.key ?? null,
    ...when,
    target,
    payload: body.payload ?? null,
    maxAttempts: body.retry?.maxAttempts ?? pool.maxAttempts,
    initialDelayMs: body.retry?.initialDelayMs ?? pool.initialDelayMs,
    maxDelayMs: body.retry?.maxDelayMs ?? pool.maxDelayMs,
    backoff: body.retry?.backoff ?? pool.backoff,
    jitter: body.retry?.jitter ?? pool.jitter,
    timeoutMs: body.timeoutMs ?? null,
    priority: body.priority ?? 0,
    overlap: body.overlap ?? "allow",
    onBusy: body.onBusy ?? "queue",
    misfire: body.misfire ?? "fire_once",
    catchupWindowMs: body.catchupWindowMs ?? 86_400_000,
    delivery: body.delivery ?? "at_least_once",
    notify: body.notify ?? null,
    tags: body.tags && Object.keys(body.tags).length > 0 ? body.tags : null,
  };
}

/** A stored job as the create body that would make it: the base a merge patch applies to. Null
 *  columns are left out, as a create would leave them out. */
export function jobAsBody(j: JobRow): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: j.name,
    type: j.type,
    schedule: j.cron
      ? {
          cron: j.cron,
          timezone: j.timezone ?? "UTC",
          ...(j.spreadMs !== null ? { spread: formatSpread(j.spreadMs) } : {}),
        }
      : { at: j.runAt!.toISOString() },
    retry: retryJson(j),
    priority: j.priority,
    overlap: j.overlap,
    misfire: j.misfire,
    onBusy: j.onBusy,
    catchupWindowMs: j.catchupWindowMs,
  };
  if (j.target) body.target = structuredClone(j.target);
  if (j.payload !== null && j.payload !== undefined) body.payload = structuredClone(j.payload);
  if (j.timeoutMs !== null) body.timeoutMs = j.timeoutMs;
  if (j.notify !== null && j.notify !== undefined) body.notify = structuredClone(j.notify);
  if (j.key !== null) body.key = j.key;
  if (j.tags !== null && j.tags !== undefined) body.tags = structuredClone(j.tags);
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
    if (f === "schedule") take("cron", "timezone", "spreadMs", "runAt", "nextFireAt");
    else if (f === "retry") take("maxAttempts", "initialDelayMs", "maxDelayMs", "backoff", "jitter");
    else if (
      [
        "name",
        "target",
        "payload",
        "timeoutMs",
        "priority",
        "overlap",
        "misfire",
        "catchupWindowMs",
        "notify",
        "key",
        "onBusy",
        "tags",
      ].includes(f)
    ) {
      take(f as keyof JobPatch);
    }
  }
  return out;
}

/** 409 for a job that exists but can no longer change: the code names why. */
export function notLive(j: Pick<JobRow, "id" | "status">, action: string): ApiError {
  if (j.status === "completed") {
    return new ApiError(
      409,
      "job_completed",
      `job ${j.id} is completed (a one-time job that has fired) and cannot be ${action}; create a new job instead`,
    );
  }
  if (j.status === "failed") {
    return new ApiError(
      409,
      "job_failed",
      `job ${j.id} failed (a one-time job whose trigger ended dead) and cannot be ${action}; replay its dead trigger (POST /v1/triggers/{id}/replay) or create a new job instead`,
    );
  }
  return new ApiError(
    409,
    "job_cancelled",
    `job ${j.id} was cancelled (DELETE) and cannot be ${action}; create a new job instead`,
  );
}

export const isLive = (j: Pick<JobRow, "status">) => j.status === "active" || j.status === "paused";
