// Turns a validated request body into a job row: semantic checks zod cannot do (strict cron, IANA
// zone, SSRF-safe target, payload size) and defaults from the job's pool.
import { checkTargetUrl, nextFires, parseCron, targetSecretRefs, validateTimezone } from "@fairway/core";
import { missingSecrets, type Db, type NewJob, type PoolConfig, type TenantRow } from "@fairway/store";
import { ApiError } from "./errors.ts";
import type { CreateJobBody } from "./schemas.ts";

type Schedule = CreateJobBody["schedule"];

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

export function checkTarget(target: CreateJobBody["target"], allowPrivate: boolean, maxBodyBytes = Infinity) {
  if (!target) return null;
  const url = checkUrl(target.url, allowPrivate);
  if (target.body !== undefined) {
    if (target.method === "GET" || target.method === "HEAD") {
      throw new ApiError(400, "body_not_allowed", `target.body: a ${target.method} request carries no body; remove target.body, or use POST, PUT, PATCH or DELETE`);
    }
    const size = typeof target.body === "string" ? new TextEncoder().encode(target.body).byteLength : payloadBytes(target.body);
    if (size > maxBodyBytes) throw new ApiError(413, "payload_too_large", `target.body is ${size} bytes; this tenant's limit is ${maxBodyBytes}`);
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
function checkUrl(raw: string, allowPrivate: boolean): string {
  const named = raw.includes("${secrets.");
  if (named && raw.startsWith("${secrets.")) return raw;
  const r = checkTargetUrl(named ? raw.replace(/\$\{secrets\.[A-Z][A-Z0-9_]*\}/g, "x") : raw, { allowPrivate });
  if (!r.ok) throw new ApiError(400, r.code, `target.url: ${r.message}`);
  return named ? raw : r.url.toString();
}

/** Every `${secrets.NAME}` a target names must exist when the job is saved. */
export async function checkSecretRefs(db: Db, tenantId: string, target: { url: string; headers?: Record<string, string>; body?: unknown } | null): Promise<void> {
  if (!target) return;
  const names = targetSecretRefs(target);
  if (names.size === 0) return;
  const missing = await missingSecrets(db, tenantId, [...names]);
  if (missing.length > 0) {
    throw new ApiError(400, "unknown_secret", `target names secret ${missing.join(", ")}, which this tenant does not have; create it first with PUT /v1/secrets/${missing[0]}`);
  }
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
  const target = checkTarget(body.target, opts.allowPrivate, tenant.maxPayloadBytes);
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
    backoff: body.retry?.backoff ?? pool.backoff,
    jitter: body.retry?.jitter ?? pool.jitter,
    timeoutMs: body.timeoutMs ?? null,
    priority: body.priority ?? 0,
    overlap: body.overlap ?? "allow",
    misfire: body.misfire ?? "fire_once",
    catchupWindowMs: body.catchupWindowMs ?? 86_400_000,
  };
}
