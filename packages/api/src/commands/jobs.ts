// Job commands: every change to a job, with one set of checks and messages, called by the API's routes
// and by the dashboard (through DashboardDeps.commands). A refusal is an ApiError (status, stable code,
// message saying what to send instead); success announces new work to the executors.
import { newId, sha256Hex, type Logger, type WebhookTarget } from "@fairway/core";
import {
  cancelJob as cancelJobRow,
  createDebounced,
  createJob as insertJob,
  DEFAULT_POOL,
  findPool,
  getJob,
  NOTIFICATION_POOL,
  notifyQuotaExhausted,
  pauseJob as pauseJobRow,
  resumeJob as resumeJobRow,
  runJobNow,
  updateJob as updateJobRow,
  type Db,
  type DebounceResult,
  type JobRow,
  type NewJob,
  type PoolConfig,
  type TenantRow,
} from "@fairway/store";
import type { z } from "zod";
import { announceWork } from "../announce.ts";
import type { JobTraceContext, ResolvedDeps } from "../env.ts";
import { ApiError, notFound } from "../errors.ts";
import { handlerTypesFor } from "../handler-types.ts";
import {
  buildJob,
  checkNotifyChannels,
  checkSecretRefs,
  isLive,
  jobAsBody,
  jobPatchOf,
  notLive,
  scheduleBase,
} from "../job-input.ts";
import { applyMergePatch, parseMerged, type Patch } from "../merge-patch.ts";
import { createJobBody } from "../schemas.ts";

/** What a command runs with: the app's dependencies and the caller's logger (the request's, or the
 *  dashboard's). */
export interface CommandContext {
  deps: ResolvedDeps;
  log: Logger;
}

/** Pool defaults for new jobs, cached briefly per process: they change only through the admin API, and a
 *  job created within seconds of a change taking the old retry defaults is harmless. A pool row, once
 *  there, is never deleted, so a cached pool also means no pool insert is needed. */
const POOL_CACHE_MS = 5000;
const poolCaches = new WeakMap<Db, Map<string, { at: number; pool: PoolConfig; known: boolean }>>();
async function poolDefaults(db: Db, type: string): Promise<PoolConfig & { known: boolean }> {
  let poolCache = poolCaches.get(db);
  if (!poolCache) poolCaches.set(db, (poolCache = new Map()));
  const hit = poolCache.get(type);
  if (hit && Date.now() - hit.at < POOL_CACHE_MS) return { ...hit.pool, known: hit.known };
  const row = await findPool(db, type);
  const pool = row ?? { type, ...DEFAULT_POOL };
  const known = row !== null;
  if (poolCache.size > 1000) poolCache.clear();
  poolCache.set(type, { at: Date.now(), pool, known });
  return { ...pool, known };
}

/** The job, when it exists and can still take `action`: 404 when it does not exist, 409 when it is
 *  completed or cancelled. */
async function liveJob(db: Db, tenantId: string, id: string, action: string): Promise<JobRow> {
  const job = await getJob(db, tenantId, id);
  if (!job) throw notFound("job");
  if (!isLive(job)) throw notLive(job, action);
  return job;
}

/** A lifecycle write found no live row: the job was deleted, completed or cancelled meanwhile. */
async function lostRace(db: Db, tenantId: string, id: string, action: string): Promise<never> {
  const job = await getJob(db, tenantId, id);
  throw job ? notLive(job, action) : notFound("job");
}

/** A create body as the job it writes: its pool's defaults, its target checked (private addresses,
 *  handler types), its secret references and notification channels found. Throws the 400 that says
 *  what to fix. Shared by a single create and each item of a batch. */
export async function prepareJob(
  deps: CommandContext["deps"],
  tenant: TenantRow,
  body: z.infer<typeof createJobBody>,
  now: Date,
) {
  const pool = await poolDefaults(deps.db, body.type);
  const job = buildJob(newId("job"), body, tenant, pool, {
    now,
    allowPrivate: deps.allowPrivateTargets,
    handlerTypes: body.target ? deps.handlerTypes : await handlerTypesFor(deps.db, deps.handlerTypes, body.type),
  });
  await checkSecretRefs(deps.db, tenant.id, job.target as WebhookTarget | null);
  await checkNotifyChannels(deps.db, tenant.id, body.notify);
  return { job, pool };
}

/** Creates a job from a checked body; with an idempotency key, a repeat of the same body answers the
 *  first job (replayed: true) and another body under the same key is a 409. */
export async function createJob(
  { deps, log }: CommandContext,
  tenant: TenantRow,
  body: z.infer<typeof createJobBody>,
  idempotencyKey?: string,
  trace: JobTraceContext | null = null,
): Promise<{ job: JobRow; replayed: boolean; debounced?: Debounced }> {
  const now = new Date(deps.now());
  const { job, pool } = await prepareJob(deps, tenant, body, now);
  // With tracing on, the job keeps its producer span's context (a child of the request's); without,
  // the caller's as it came, so the deliveries still continue the caller's trace.
  const span = deps.tracing?.jobCreate({ tenantId: tenant.id, type: job.type, key: job.key ?? null }) ?? null;
  const kept = span ?? trace;
  if (kept) {
    job.traceparent = kept.traceparent;
    job.tracestate = kept.tracestate;
  }
  try {
    const created = await createPrepared({ deps, log }, tenant, body, job, pool, now, idempotencyKey);
    span?.end(created.job.id);
    return created;
  } catch (err) {
    span?.end(null, err instanceof ApiError ? err.code : "internal_error");
    throw err;
  }
}

async function createPrepared(
  { deps, log }: CommandContext,
  tenant: TenantRow,
  body: z.infer<typeof createJobBody>,
  job: NewJob,
  pool: { known: boolean },
  now: Date,
  idempotencyKey: string | undefined,
): Promise<{ job: JobRow; replayed: boolean; debounced?: Debounced }> {
  if (body.debounce) return createDebouncedJob({ deps, log }, tenant, job, body.debounce, pool.known, idempotencyKey);
  const result = await insertJob(deps.db, job, {
    maxJobs: tenant.maxJobs,
    poolKnown: pool.known,
    idempotencyKey,
    requestHash: idempotencyKey ? await sha256Hex(JSON.stringify(body)) : undefined,
  });
  if (result.kind === "idempotency_conflict") {
    throw new ApiError(
      409,
      "idempotency_conflict",
      "this Idempotency-Key was already used with a different request body",
    );
  }
  if (result.kind === "max_jobs") return maxJobsExceeded({ deps, log }, tenant.id, result.limit);
  if (result.kind === "created") {
    // One-time jobs are pending now; cron fires are announced by the materializer when it writes them.
    const dueAt = result.job.cron ? null : result.job.runAt;
    if (!result.job.cron || result.job.nextFireAt!.getTime() <= now.getTime() + 1000) {
      announceWork(deps.coordinator, log, { type: result.job.type, tenantId: tenant.id, dueAt }, now.getTime());
    }
  }
  log.info("job created", { jobId: result.job.id, replayed: result.kind === "replayed" });
  return { job: result.job, replayed: result.kind === "replayed" };
}

/** A create refused by the tenant's maxJobs: tenant.quota_exhausted, folded per channel window like
 *  every event (best effort: the 409 stands). */
async function maxJobsExceeded({ deps, log }: CommandContext, tenantId: string, limit: number): Promise<never> {
  const made = await notifyQuotaExhausted(deps.db, tenantId, limit).catch((err: unknown) => {
    log.warn("quota notification failed", { err });
    return [];
  });
  if (made.length > 0)
    announceWork(deps.coordinator, log, { type: NOTIFICATION_POOL, tenantId, dueAt: null }, deps.now());
  throw new ApiError(
    409,
    "max_jobs_exceeded",
    `this tenant has reached its maxJobs quota of ${limit} live jobs (active or paused): cancel jobs it no longer needs (DELETE /v1/jobs/:id), or ask the operator to raise maxJobs (PATCH /v1/admin/tenants/:id)`,
  );
}

/** What a create with `debounce` answers besides the job: the job it joined (null when it made a new
 *  one) and how many creates that job has folded. */
export interface Debounced {
  joined: string | null;
  folded: number;
}

/** A create with `debounce` (docs/flow-control.md): folded into the key's pending job, or a new one. */
async function createDebouncedJob(
  { deps, log }: CommandContext,
  tenant: TenantRow,
  job: ReturnType<typeof buildJob>,
  d: NonNullable<z.infer<typeof createJobBody>["debounce"]>,
  poolKnown: boolean,
  idempotencyKey: string | undefined,
): Promise<{ job: JobRow; replayed: boolean; debounced: Debounced }> {
  if (job.cron || !job.runAt) {
    throw new ApiError(
      400,
      "debounce_not_one_time",
      'debounce: only one-time jobs are debounced; send schedule {"delayMs": …} or {"at": …}, or leave out debounce',
    );
  }
  if (idempotencyKey !== undefined) {
    throw new ApiError(
      400,
      "debounce_idempotency_key",
      "debounce: a debounced create folds into the key's pending job, so it takes no Idempotency-Key; send one or the other",
    );
  }
  const now = new Date(deps.now());
  const result: DebounceResult = await createDebounced(
    deps.db,
    job,
    { maxJobs: tenant.maxJobs, poolKnown },
    {
      key: d.key,
      periodMs: d.periodMs,
      maxWaitMs: d.maxWaitMs ?? null,
      mode: d.mode ?? "trailing",
      now,
      at: job.runAt,
    },
  );
  if (result.kind === "max_jobs") return maxJobsExceeded({ deps, log }, tenant.id, result.limit);
  if (result.kind === "type_mismatch") {
    throw new ApiError(
      409,
      "debounce_type_mismatch",
      `debounce: key "${d.key}" is held by pending job ${result.job.id} of type "${result.job.type}"; send that type, or another debounce key`,
    );
  }
  if (result.kind !== "created" && result.kind !== "joined")
    throw new Error(`unexpected debounce result ${result.kind}`);
  announceWork(
    deps.coordinator,
    log,
    { type: result.job.type, tenantId: tenant.id, dueAt: result.job.runAt },
    now.getTime(),
  );
  const folded = (result.job.debounce as { folded: number }).folded;
  log.info("job created", { jobId: result.job.id, debounced: result.kind });
  return {
    job: result.job,
    replayed: false,
    debounced: { joined: result.kind === "joined" ? result.job.id : null, folded },
  };
}

/** JSON Merge Patch of a live job: the job's fields with the patch merged in are checked as a create
 *  is; only the fields the patch names are written, from the job's next fire. */
export async function updateJob(
  { deps }: CommandContext,
  tenant: TenantRow,
  id: string,
  patch: Patch,
): Promise<JobRow> {
  if ("debounce" in patch) {
    throw new ApiError(
      400,
      "validation_error",
      "debounce: is set when a job is created and cannot be changed; create a new debounced job instead",
    );
  }
  const current = await liveJob(deps.db, tenant.id, id, "changed");
  if ("type" in patch && patch.type !== current.type) {
    throw new ApiError(
      400,
      "validation_error",
      `type: a job's type cannot be changed (it is "${current.type}"); create a new job of the other type`,
    );
  }
  const base = jobAsBody(current);
  const fresh = scheduleBase(current, patch.schedule);
  if (fresh) base.schedule = fresh;
  const body = parseMerged(createJobBody, applyMergePatch(base, patch));
  const now = new Date(deps.now());
  const pool = await poolDefaults(deps.db, current.type);
  const built = buildJob(current.id, body, tenant, pool, {
    now,
    allowPrivate: deps.allowPrivateTargets,
    handlerTypes: deps.handlerTypes,
  });
  await checkSecretRefs(deps.db, tenant.id, built.target as WebhookTarget | null);
  if ("notify" in patch) await checkNotifyChannels(deps.db, tenant.id, body.notify);
  const job = await updateJobRow(deps.db, tenant.id, current.id, jobPatchOf(built, Object.keys(patch)), now);
  return job ?? lostRace(deps.db, tenant.id, current.id, "changed");
}

/** Cancels a job and its pending triggers; cancelling a cancelled job answers it again (idempotent). */
export async function cancelJob({ deps }: CommandContext, tenantId: string, id: string): Promise<JobRow> {
  const job = await cancelJobRow(deps.db, tenantId, id);
  if (job) return job;
  const existing = await getJob(deps.db, tenantId, id);
  if (!existing) throw notFound("job");
  if (existing.status !== "cancelled") throw notLive(existing, "cancelled");
  return existing;
}

export async function pauseJob({ deps }: CommandContext, tenantId: string, id: string): Promise<JobRow> {
  await liveJob(deps.db, tenantId, id, "paused");
  return (await pauseJobRow(deps.db, tenantId, id)) ?? lostRace(deps.db, tenantId, id, "paused");
}

export async function resumeJob({ deps, log }: CommandContext, tenantId: string, id: string): Promise<JobRow> {
  await liveJob(deps.db, tenantId, id, "resumed");
  const job = await resumeJobRow(deps.db, tenantId, id, new Date(deps.now()));
  if (!job) return lostRace(deps.db, tenantId, id, "resumed");
  announceWork(deps.coordinator, log, { type: job.type, tenantId: job.tenantId, dueAt: null }, deps.now());
  return job;
}

/** Fires the job now: a new pending trigger, whatever its schedule says. */
export async function runJob({ deps, log }: CommandContext, tenantId: string, id: string) {
  await liveJob(deps.db, tenantId, id, "run");
  const trigger = await runJobNow(deps.db, tenantId, id, new Date(deps.now()));
  if (!trigger) return lostRace(deps.db, tenantId, id, "run");
  announceWork(deps.coordinator, log, { type: trigger.type, tenantId: trigger.tenantId, dueAt: null }, deps.now());
  return trigger;
}
