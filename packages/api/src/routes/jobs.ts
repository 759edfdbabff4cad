// Tenant job routes: create (with Idempotency-Key), list, read (with the next 5 fires), update,
// delete, pause, resume, run now, and a job's triggers.
import { getJob, lastRuns, listJobs, listTriggers, type JobRow } from "@fairway/store";
import { cancelJob, createJob, pauseJob, resumeJob, runJob, updateJob } from "../commands/jobs.ts";
import { ApiError, notFound } from "../errors.ts";
import { mergePatchBody } from "../merge-patch.ts";
import { z } from "zod";
import { route } from "../route.ts";
import { createJobBody, jobListQuery, triggerListQuery } from "../schemas.ts";
import { jobJson, page, triggerJson } from "../serialize.ts";
import { tagFilter } from "../tag-filter.ts";
import { traceContextOf } from "../trace-context.ts";
import { jsonBody, queryOf } from "../validate.ts";

const JOB_ID = { id: "The job id" };

/** A one-time job whose instant was already past when it was created fires at once; the 201 says so
 *  (an `at` in the past is more often a mistake than a wish). From the stored row, so an idempotent
 *  replay answers the same. */
function firesImmediately(j: JobRow): boolean {
  return !j.cron && j.runAt !== null && j.runAt.getTime() <= j.createdAt.getTime();
}

export const jobRoutes = [
  route({
    method: "post",
    path: "/v1/jobs",
    summary: "Create a job (honours Idempotency-Key)",
    headers: {
      "idempotency-key": z.string().min(1).max(200),
      traceparent: z
        .string()
        .max(55)
        .describe(
          "W3C trace context: the job's triggers continue this trace (a cron job's fires link to it); a malformed one is ignored, as the W3C spec says",
        ),
      tracestate: z.string().max(512).describe("W3C tracestate, kept and forwarded with traceparent"),
    },
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
      description:
        "The job (a replay of an Idempotency-Key answers the same, with Idempotent-Replayed: true; a debounced create that made a new job says debounced.joined: null)",
      json: "Job",
    },
    also: [
      {
        status: 200,
        description: "A debounced create folded into the key's pending job: that job, with debounced.joined = its id",
        json: "Job",
      },
    ],
    errors: [400, 409, 413],
    handler: async (c) => {
      const body = await jsonBody(c, createJobBody);
      const idempotencyKey = c.req.header("idempotency-key");
      if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 200)) {
        throw new ApiError(400, "validation_error", "Idempotency-Key must be 1-200 characters");
      }
      const { job, replayed, debounced } = await createJob(
        c.var,
        c.var.tenant,
        body,
        idempotencyKey,
        traceContextOf(c.req.header("traceparent"), c.req.header("tracestate")),
      );
      // A replay answers exactly like the original (same status, same body), as Stripe does: a client that
      // retried after a lost response cannot tell, and need not care; the header says it was a replay.
      if (replayed) c.header("idempotent-replayed", "true");
      const json = { ...jobJson(job, { upcoming: 5 }), firesImmediately: firesImmediately(job) };
      if (debounced) return c.json({ ...json, debounced }, debounced.joined ? 200 : 201);
      return c.json(json, 201);
    },
  }),
  route({
    method: "get",
    path: "/v1/jobs",
    summary:
      "List jobs with their last outcome and failure streak (cursor pagination; ?failing=true for failing jobs; cancelled jobs only with ?status=cancelled)",
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
        key: q.key,
        tags: tagFilter(c.req.queries("tag")),
        failing: q.failing,
      });
      // The page's last outcomes: one index probe per job, not a join of every job's history.
      const last = await lastRuns(
        c.var.deps.db,
        c.var.tenant.id,
        rows.map((j) => j.id),
      );
      return c.json(page(rows, q.limit, (j) => jobJson(j, { lastRun: last.get(j.id) ?? null })));
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
      const last = await lastRuns(c.var.deps.db, c.var.tenant.id, [job.id]);
      return c.json(jobJson(job, { upcoming: 5, lastRun: last.get(job.id) ?? null }));
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
      const patch = await mergePatchBody(c);
      const job = await updateJob(c.var, c.var.tenant, c.req.param("id"), patch);
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
      return c.json(jobJson(await cancelJob(c.var, c.var.tenant.id, c.req.param("id"))));
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
      return c.json(jobJson(await pauseJob(c.var, c.var.tenant.id, c.req.param("id"))));
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
      const job = await resumeJob(c.var, c.var.tenant.id, c.req.param("id"));
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
      return c.json(triggerJson(await runJob(c.var, c.var.tenant.id, c.req.param("id"))), 201);
    },
  }),
  route({
    method: "get",
    path: "/v1/jobs/:id/triggers",
    summary: "A job's triggers, newest first",
    params: JOB_ID,
    query: triggerListQuery,
    ok: { status: 200, description: "A page of triggers", json: "TriggerPage" },
    errors: [400, 404],
    handler: async (c) => {
      const { deps, tenant } = c.var;
      const q = queryOf(c, triggerListQuery);
      const job = await getJob(deps.db, tenant.id, c.req.param("id"));
      if (!job) throw notFound("job");
      const rows = await listTriggers(deps.db, tenant.id, job.id, q.cursor ?? null, q.limit, { key: q.key });
      return c.json(page(rows, q.limit, triggerJson));
    },
  }),
];
