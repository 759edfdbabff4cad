// Rows → the API's camelCase JSON. Secrets are never part of these shapes.
import { formatSpread, nextShiftedFires, spreadOffsetMs } from "@fairway/core";
import { notificationStatus, OWN_FIELDS, shownChannelTarget, type OwnField, type OwnValues } from "@fairway/store";
import type {
  AttemptDetail,
  BackfillInfo,
  DebounceState,
  AttemptRow,
  ChannelRow,
  JobRow,
  LastRun,
  NotificationRow,
  PlanRow,
  PoolConfig,
  TenantRow,
  TriggerRow,
} from "@fairway/store";

/** A tenant's quotas, as the admin API sets them and GET /v1/quota shows them. */
export function quotaJson(t: TenantRow) {
  return {
    maxInFlight: t.maxInFlight,
    weight: t.weight,
    ratePerSecond: t.ratePerSecond,
    burst: t.burst,
    maxJobs: t.maxJobs,
    maxPayloadBytes: t.maxPayloadBytes,
    historyRetentionDays: t.historyRetentionDays,
    deadRetentionDays: t.deadRetentionDays,
    consecutiveFailureLimit: t.consecutiveFailureLimit,
  };
}

/** The quota a plan governs as it is in force for the tenant (its own, else its plan's, else the default). */
function effectiveJson(t: TenantRow) {
  return {
    maxInFlight: t.maxInFlight,
    weight: t.weight,
    ratePerSecond: t.ratePerSecond,
    burst: t.burst,
    maxJobs: t.maxJobs,
    maxPayloadBytes: t.maxPayloadBytes,
    historyRetentionDays: t.historyRetentionDays,
    keyDefaults: { maxInFlight: t.keyMaxInFlight, ratePerSecond: t.keyRatePerSecond, weight: t.keyWeight },
  };
}

/** The values set on the tenant itself, in the API's shape: only the fields it sets. */
export function overridesJson(t: TenantRow) {
  const own = (typeof t.own === "string" ? JSON.parse(t.own) : (t.own ?? {})) as OwnValues;
  const out: Record<string, unknown> = {};
  const keys: Record<string, number> = {};
  for (const [f, v] of Object.entries(own) as Array<[OwnField, number]>) {
    if (!(f in OWN_FIELDS)) continue;
    if (f === "keyMaxInFlight") keys.maxInFlight = v;
    else if (f === "keyRatePerSecond") keys.ratePerSecond = v;
    else if (f === "keyWeight") keys.weight = v;
    else out[f] = v;
  }
  if (Object.keys(keys).length > 0) out.keyDefaults = keys;
  return out;
}

export function tenantJson(t: TenantRow) {
  return {
    id: t.id,
    name: t.name,
    status: t.status,
    plan: t.planId,
    ...quotaJson(t),
    effective: effectiveJson(t),
    overrides: overridesJson(t),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

/** A quota plan; `tenants`: how many are on it. */
export function planJson(p: PlanRow, tenants: number) {
  return {
    id: p.id,
    name: p.name,
    maxInFlight: p.maxInFlight,
    weight: p.weight,
    ratePerSecond: p.ratePerSecond,
    burst: p.burst,
    maxJobs: p.maxJobs,
    maxPayloadBytes: p.maxPayloadBytes,
    historyDays: p.historyDays,
    keyDefaults: { maxInFlight: p.keyMaxInFlight, ratePerSecond: p.keyRatePerSecond, weight: p.keyWeight },
    tenants,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

/** A job's retry policy, as the create body takes it and the job's JSON shows it. */
export function retryJson(j: JobRow) {
  return {
    maxAttempts: j.maxAttempts,
    initialDelayMs: j.initialDelayMs,
    maxDelayMs: j.maxDelayMs,
    backoff: j.backoff,
    jitter: j.jitter,
  };
}

export function jobJson(j: JobRow, opts: { upcoming?: number; now?: Date; lastRun?: LastRun | null } = {}) {
  const schedule = j.cron
    ? { cron: j.cron, timezone: j.timezone, ...(j.spreadMs !== null ? { spread: formatSpread(j.spreadMs) } : {}) }
    : { at: j.runAt };
  const active = j.status === "active";
  const out: Record<string, unknown> = {
    id: j.id,
    name: j.name,
    type: j.type,
    key: j.key,
    status: j.status,
    pauseReason: j.status === "paused" ? j.pauseReason : null,
    schedule,
    target: j.target,
    payload: j.payload,
    retry: retryJson(j),
    timeoutMs: j.timeoutMs,
    priority: j.priority,
    overlap: j.overlap,
    onBusy: j.onBusy,
    misfire: j.misfire,
    delivery: j.delivery,
    catchupWindowMs: j.catchupWindowMs,
    notify: j.notify ?? null,
    tags: (j.tags as Record<string, string> | null) ?? {},
    // A debounced one-time job keeps its fire time (moved by each fold) in runAt alone.
    nextFireAt: active ? (j.nextFireAt ?? (j.cron ? null : j.runAt)) : null,
    debounce: debounceJson(j.debounce as DebounceState | null),
    failureStreak: j.failureStreak,
    createdAt: j.createdAt,
    updatedAt: j.updatedAt,
  };
  if (opts.lastRun !== undefined) out.lastRun = opts.lastRun;
  if (opts.upcoming && j.cron && j.timezone && active && j.nextFireAt) {
    // The next N fires, starting with the one already persisted.
    const after = new Date(j.nextFireAt.getTime() - 1);
    // Spread jobs: each with the job's offset, as the materializer fires them.
    out.nextFires = nextShiftedFires(j.cron, j.timezone, after, opts.upcoming, spreadOffsetMs(j.id, j.spreadMs));
  }
  return out;
}

function attemptJson(a: AttemptRow) {
  const detail = a.detail as AttemptDetail | null;
  return {
    attempt: a.attempt,
    startedAt: a.startedAt,
    durationMs: a.durationMs,
    outcome: a.outcome,
    httpStatus: a.httpStatus,
    error: a.error,
    responseBody: a.responseBody,
    // As sent, with `${secrets.NAME}` where a secret's value went; null for a handler or a delivery
    // that failed before sending.
    request: detail?.request ?? null,
    response:
      a.httpStatus === null
        ? null
        : {
            status: a.httpStatus,
            headers: detail?.responseHeaders ?? {},
            body: a.responseBody ?? "",
            truncated: detail?.responseTruncated ?? false,
          },
  };
}

function debounceJson(d: DebounceState | null) {
  return (
    d && { key: d.key, periodMs: d.periodMs, maxWaitMs: d.maxWaitMs, mode: d.mode ?? "trailing", folded: d.folded }
  );
}

/** What started a trigger: its schedule, a run-now, a backfill, a re-run of a finished trigger, or a
 *  replay of the dead trigger. */
function triggeredBy(
  t: Pick<TriggerRow, "kind" | "replayedAt">,
): "schedule" | "manual" | "replay" | "backfill" | "rerun" {
  if (t.replayedAt) return "replay";
  return t.kind === "manual" || t.kind === "backfill" || t.kind === "rerun" ? t.kind : "schedule";
}

export function triggerJson(t: TriggerRow & { attempts?: AttemptRow[] }) {
  return {
    id: t.id,
    jobId: t.jobId,
    key: t.key,
    kind: t.kind,
    triggeredBy: triggeredBy(t),
    backfillId: t.backfillId,
    rerunOf: t.rerunOf,
    scheduledFor: t.scheduledFor,
    status: t.status,
    reason: t.reason,
    attemptCount: t.attemptCount,
    maxAttempts: t.maxAttempts,
    nextAttemptAt: t.status === "pending" ? t.nextAttemptAt : null,
    createdAt: t.createdAt,
    finishedAt: t.finishedAt,
    ...(t.attempts ? { attempts: t.attempts.map(attemptJson) } : {}),
  };
}

/** A dead letter: the trigger, its job's name and type, and how its last attempt ended. */
export function deadLetterJson(
  d: TriggerRow & {
    jobName: string;
    jobType: string;
    lastOutcome: string | null;
    lastHttpStatus: number | null;
    lastError: string | null;
  },
) {
  return {
    ...triggerJson(d),
    jobName: d.jobName,
    jobType: d.jobType,
    lastAttempt:
      d.lastOutcome === null ? null : { outcome: d.lastOutcome, httpStatus: d.lastHttpStatus, error: d.lastError },
  };
}

export function poolJson(p: PoolConfig) {
  return p;
}

/** Cursor pagination: the next cursor is the last id when the page is full. */
export function page<T extends { id: string }>(rows: T[], limit: number, map: (r: T) => unknown) {
  return { data: rows.map(map), nextCursor: rows.length === limit ? rows[rows.length - 1].id : null };
}

/** A channel. A Slack incoming-webhook URL is a credential: only its origin is shown. */
export function channelJson(c: ChannelRow) {
  return {
    id: c.id,
    type: c.type,
    ...shownChannelTarget(c),
    events: c.events,
    windowSeconds: c.windowSeconds,
    createdAt: c.createdAt,
  };
}

export function notificationJson(n: NotificationRow) {
  return {
    id: n.id,
    channelId: n.channelId,
    channelType: n.channelType,
    event: n.event,
    jobId: n.jobId,
    folded: n.folded,
    data: n.data,
    status: notificationStatus(n),
    attempts: n.attempts,
    createdAt: n.createdAt,
    finishedAt: n.finishedAt,
  };
}

export function backfillJson(b: BackfillInfo) {
  return {
    id: b.id,
    jobId: b.jobId,
    from: b.fromAt,
    to: b.toAt,
    overlap: b.overlap,
    fires: b.fires,
    skipped: b.skipped,
    counts: b.counts,
    cancelledAt: b.cancelledAt,
    createdAt: b.createdAt,
  };
}
