// Turns a validated request body into a job row: semantic checks zod cannot do (strict cron, IANA
// zone, SSRF-safe target, payload size) and defaults from the job's pool.
import { checkTargetUrl, nextFires, parseCron, validateTimezone } from "@fairway/core";
import type { NewJob, PoolConfig, TenantRow } from "@fairway/store";
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

export function checkTarget(target: CreateJobBody["target"], allowPrivate: boolean) {
  if (!target) return null;
  const r = checkTargetUrl(target.url, { allowPrivate });
  if (!r.ok) throw new ApiError(400, r.code, `target.url: ${r.message}`);
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
    delivery: body.delivery ?? "at_least_once",
  };
}
