// Tenant trigger routes: a trigger with its attempts, dead letters, replay, and the tenant's quota.
import { getTrigger, listDeadLetters, tenantUsage } from "@fairway/store";
import { replayJobDeadLetters, replayTrigger } from "../commands/triggers.ts";
import { route } from "../route.ts";
import { notFound } from "../errors.ts";
import { deadLetterQuery, replayDeadLettersBody } from "../schemas.ts";
import { deadLetterJson, page, quotaJson, triggerJson } from "../serialize.ts";
import { jsonBody, queryOf } from "../validate.ts";

const TRIGGER_ID = { id: "The trigger id" };

export const triggerRoutes = [
  route({
    method: "get",
    path: "/v1/triggers/:id",
    summary: "A trigger with its attempts",
    params: TRIGGER_ID,
    ok: { status: 200, description: "The trigger", json: "Trigger" },
    errors: [404],
    handler: async (c) => {
      const t = await getTrigger(c.var.deps.db, c.var.tenant.id, c.req.param("id"));
      if (!t) throw notFound("trigger");
      return c.json(triggerJson(t));
    },
  }),
  route({
    method: "post",
    path: "/v1/triggers/:id/replay",
    summary: "Replay a dead letter",
    params: TRIGGER_ID,
    ok: { status: 200, description: "The trigger, pending again", json: "Trigger" },
    errors: [404, 409],
    handler: async (c) => {
      return c.json(triggerJson(await replayTrigger(c.var, c.var.tenant.id, c.req.param("id"))));
    },
  }),
  route({
    method: "get",
    path: "/v1/dead-letters",
    summary: "Dead letters, newest first, with the job's name and type and the last attempt",
    query: deadLetterQuery,
    ok: { status: 200, description: "A page of dead letters", json: "DeadLetterPage" },
    errors: [400],
    handler: async (c) => {
      const q = queryOf(c, deadLetterQuery);
      const rows = await listDeadLetters(c.var.deps.db, c.var.tenant.id, {
        jobId: q.jobId,
        after: q.cursor ?? null,
        limit: q.limit,
      });
      return c.json(page(rows, q.limit, deadLetterJson));
    },
  }),
  route({
    method: "post",
    path: "/v1/dead-letters/replay",
    summary: "Replay a job's dead letters, oldest first, at most 100 per call (call again while remaining > 0)",
    body: { name: "ReplayDeadLetters", example: { jobId: "job_01JD0000000000000000000000" } },
    ok: { status: 200, description: "How many were replayed and how many the job still has", json: "DeadLetterReplay" },
    errors: [400, 404],
    handler: async (c) => {
      const body = await jsonBody(c, replayDeadLettersBody);
      return c.json(await replayJobDeadLetters(c.var, c.var.tenant.id, body.jobId));
    },
  }),
  route({
    method: "get",
    path: "/v1/quota",
    summary: "Limits and live usage",
    ok: { status: 200, description: "Quota", json: "Quota" },
    handler: async (c) => {
      const t = c.var.tenant;
      const usage = await tenantUsage(c.var.deps.db, t.id);
      return c.json({
        limits: quotaJson(t),
        usage: {
          running: usage.running,
          due: usage.due,
          pending: usage.pending,
          jobs: usage.jobs,
          dead: usage.dead,
          oldestDueLagMs: usage.oldestDueLagMs,
        },
      });
    },
  }),
];
