// Tenant job routes: create (with Idempotency-Key), list, read (with the next 5 fires), update,
// delete, pause, resume, run now, and a job's triggers.
import { newId, sha256Hex, type WebhookTarget } from "@fairway/core";
import {
  cancelJob,
  createJob,
  DEFAULT_POOL,
  findPool,
  getJob,
  listJobs,
  listTriggers,
  NOTIFICATION_POOL,
  notifyQuotaExhausted,
  pauseJob,
  resumeJob,
  runJobNow,
  updateJob,
  type Db,
  type JobRow,
  type PoolConfig,
} from "@fairway/store";
import { z } from "zod";
import { route } from "../route.ts";
import { ApiError, notFound } from "../errors.ts";
import { announceWork } from "../announce.ts";
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
import { applyMergePatch, mergePatchBody, parseMerged } from "../merge-patch.ts";
import { createJobBody, jobListQuery, pageQuery } from "../schemas.ts";
import { jobJson, page, triggerJson } from "../serialize.ts";
import { jsonBody, queryOf } from "../validate.ts";

const JOB_ID = { id: "The job id" };

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

/** A one-time job whose instant was already past when it was created fires at once; the 201 says so
 *  (an `at` in the past is more often a mistake than a wish). From the stored row, so an idempotent
 *  replay answers the same. */
function firesImmediately(j: JobRow): boolean {
  return !j.cron && j.runAt !== null && j.runAt.getTime() <= j.createdAt.getTime();
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

export const jobRoutes = [
  route({
    method: "post",
    path: "/v1/jobs",
    summary: "Create a job (honours Idempotency-Key)",
    headers: { "idempotency-key": z.string().min(1).max(200) },
    body: {
      name: "CreateJob",
      example: {
        name: "example",
        schedule: { delayMs: 60_000 },
        target: { url: "https://example.com/hook" },
        payload: { n: 1 },
      },
    },
    ok: {
      status: 201,
      description: "The job (a replay of an Idempotency-Key answers the same, with Idempotent-Replayed: true)",
      json: "Job",
    },
    errors: [400, 409, 413],
    handler: async (c) => {
      const { deps, tenant } = c.var;
      const body = await jsonBody(c, createJobBody);
      const idempotencyKey = c.req.header("idempotency-key");
      if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 200)) {
        throw new ApiError(400, "validation_error", "Idempotency-Key must be 1-200 characters");
      }
      const now = new Date(deps.now());
      const pool = await poolDefaults(deps.db, body.type);
      const job = buildJob(newId("job"), body, tenant, pool, {
        now,
        allowPrivate: deps.allowPrivateTargets,
        handlerTypes: body.target ? deps.handlerTypes : await handlerTypesFor(deps.db, deps.handlerTypes, body.type),
      });
      await checkSecretRefs(deps.db, tenant.id, job.target as WebhookTarget | null);
      await checkNotifyChannels(deps.db, tenant.id, body.notify);
      const result = await createJob(deps.db, job, {
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
      if (result.kind === "max_jobs") {
        // tenant.quota_exhausted, folded per channel window like every event (best effort: the 409 stands).
        const made = await notifyQuotaExhausted(deps.db, tenant.id, result.limit).catch((err: unknown) => {
          c.var.log.warn("quota notification failed", { err });
          return [];
        });
        if (made.length > 0)
          announceWork(
            deps.coordinator,
            c.var.log,
            { type: NOTIFICATION_POOL, tenantId: tenant.id, dueAt: null },
            deps.now(),
          );
        throw new ApiError(409, "max_jobs_exceeded", `this tenant may have at most ${result.limit} jobs`);
      }
      if (result.kind === "created") {
        // One-time jobs are pending now; cron fires are announced by the materializer when it writes them.
        const dueAt = result.job.cron ? null : result.job.runAt;
        if (!result.job.cron || result.job.nextFireAt!.getTime() <= now.getTime() + 1000) {
          announceWork(
            deps.coordinator,
            c.var.log,
            { type: result.job.type, tenantId: tenant.id, dueAt },
            now.getTime(),
          );
        }
      }
      // A replay answers exactly like the original (same status, same body), as Stripe does: a client that
      // retried after a lost response cannot tell, and need not care; the header says it was a replay.
      if (result.kind === "replayed") c.header("idempotent-replayed", "true");
      c.var.log.info("job created", { jobId: result.job.id, replayed: result.kind === "replayed" });
      return c.json({ ...jobJson(result.job, { upcoming: 5 }), firesImmediately: firesImmediately(result.job) }, 201);
    },
  }),
  route({
    method: "get",
    path: "/v1/jobs",
    summary: "List jobs (cursor pagination; cancelled jobs only with ?status=cancelled)",
    query: jobListQuery,
    ok: { status: 200, description: "A page of jobs", json: "JobPage" },
    errors: [400],
    handler: async (c) => {
      const q = queryOf(c, jobListQuery);
      const rows = await listJobs(c.var.deps.db, c.var.tenant.id, {
        after: q.cursor ?? null,
        limit: q.limit,
        status: q.status,
        type: q.type,
        name: q.name,
      });
      return c.json(page(rows, q.limit, (j) => jobJson(j)));
    },
  }),
  route({
    method: "get",
    path: "/v1/jobs/:id",
    summary: "A job with its next 5 fires",
    params: JOB_ID,
    ok: { status: 200, description: "The job", json: "Job" },
    errors: [404],
    handler: async (c) => {
      const job = await getJob(c.var.deps.db, c.var.tenant.id, c.req.param("id"));
      if (!job) throw notFound("job");
      return c.json(jobJson(job, { upcoming: 5 }));
    },
  }),
  route({
    method: "patch",
    path: "/v1/jobs/:id",
    summary: "Update a job (JSON Merge Patch; from its next fire)",
    params: JOB_ID,
    body: { name: "UpdateJob", mergePatch: true, example: { name: "renamed", payload: { n: 2 } } },
    ok: { status: 200, description: "The job", json: "Job" },
    errors: [400, 404, 409, 413],
    handler: async (c) => {
      const { deps, tenant } = c.var;
      const patch = await mergePatchBody(c);
      const current = await liveJob(deps.db, tenant.id, c.req.param("id"), "changed");
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
      const job = await updateJob(deps.db, tenant.id, current.id, jobPatchOf(built, Object.keys(patch)), now);
      if (!job) return lostRace(deps.db, tenant.id, current.id, "changed");
      return c.json(jobJson(job, { upcoming: 5 }));
    },
  }),
  /** DELETE cancels; a second DELETE answers the same (200, the cancelled job), so a retried request
   *  cannot tell it was a retry. */
  route({
    method: "delete",
    path: "/v1/jobs/:id",
    summary: "Cancel a job and its pending triggers (idempotent)",
    params: JOB_ID,
    ok: { status: 200, description: "The job", json: "Job" },
    errors: [404],
    handler: async (c) => {
      const { db } = c.var.deps;
      const job = await cancelJob(db, c.var.tenant.id, c.req.param("id"));
      if (job) return c.json(jobJson(job));
      const existing = await getJob(db, c.var.tenant.id, c.req.param("id"));
      if (!existing) throw notFound("job");
      if (existing.status !== "cancelled") throw notLive(existing, "cancelled");
      return c.json(jobJson(existing));
    },
  }),
  route({
    method: "post",
    path: "/v1/jobs/:id/pause",
    summary: "Pause",
    params: JOB_ID,
    ok: { status: 200, description: "The job", json: "Job" },
    errors: [404, 409],
    handler: async (c) => {
      const { db } = c.var.deps;
      await liveJob(db, c.var.tenant.id, c.req.param("id"), "paused");
      const job = await pauseJob(db, c.var.tenant.id, c.req.param("id"));
      if (!job) return lostRace(db, c.var.tenant.id, c.req.param("id"), "paused");
      return c.json(jobJson(job));
    },
  }),
  route({
    method: "post",
    path: "/v1/jobs/:id/resume",
    summary: "Resume",
    params: JOB_ID,
    ok: { status: 200, description: "The job", json: "Job" },
    errors: [404],
    handler: async (c) => {
      const { db } = c.var.deps;
      await liveJob(db, c.var.tenant.id, c.req.param("id"), "resumed");
      const job = await resumeJob(db, c.var.tenant.id, c.req.param("id"), new Date(c.var.deps.now()));
      if (!job) return lostRace(db, c.var.tenant.id, c.req.param("id"), "resumed");
      announceWork(
        c.var.deps.coordinator,
        c.var.log,
        { type: job.type, tenantId: job.tenantId, dueAt: null },
        c.var.deps.now(),
      );
      return c.json(jobJson(job, { upcoming: 5 }));
    },
  }),
  route({
    method: "post",
    path: "/v1/jobs/:id/run",
    summary: "Fire now",
    params: JOB_ID,
    ok: { status: 201, description: "The new trigger", json: "Trigger" },
    errors: [404],
    handler: async (c) => {
      const { db } = c.var.deps;
      await liveJob(db, c.var.tenant.id, c.req.param("id"), "run");
      const trigger = await runJobNow(db, c.var.tenant.id, c.req.param("id"), new Date(c.var.deps.now()));
      if (!trigger) return lostRace(db, c.var.tenant.id, c.req.param("id"), "run");
      announceWork(
        c.var.deps.coordinator,
        c.var.log,
        { type: trigger.type, tenantId: trigger.tenantId, dueAt: null },
        c.var.deps.now(),
      );
      return c.json(triggerJson(trigger), 201);
    },
  }),
  route({
    method: "get",
    path: "/v1/jobs/:id/triggers",
    summary: "A job's triggers, newest first",
    params: JOB_ID,
    query: pageQuery,
    ok: { status: 200, description: "A page of triggers", json: "TriggerPage" },
    errors: [400, 404],
    handler: async (c) => {
      const { deps, tenant } = c.var;
      const q = queryOf(c, pageQuery);
      const job = await getJob(deps.db, tenant.id, c.req.param("id"));
      if (!job) throw notFound("job");
      const rows = await listTriggers(deps.db, tenant.id, job.id, q.cursor ?? null, q.limit);
      return c.json(page(rows, q.limit, triggerJson));
    },
  }),
];
