// Tenant trigger routes: a trigger with its attempts, dead letters, replay, and the tenant's quota.
import { getTrigger, listDeadLetters, replayTrigger, tenantUsage } from "@fairway/store";
import { route } from "../route.ts";
import { announceWork } from "../announce.ts";
import { ApiError, notFound } from "../errors.ts";
import { deadLetterQuery } from "../schemas.ts";
import { deadLetterJson, page, quotaJson, triggerJson } from "../serialize.ts";
import { queryOf } from "../validate.ts";

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
      const { deps, tenant } = c.var;
      const replayed = await replayTrigger(deps.db, tenant.id, c.req.param("id"));
      if (!replayed) {
        const exists = await getTrigger(deps.db, tenant.id, c.req.param("id"));
        if (!exists) throw notFound("trigger");
        throw new ApiError(409, "not_dead", `only dead triggers can be replayed; this one is ${exists.status}`);
      }
      const t = await getTrigger(deps.db, tenant.id, replayed.id);
      announceWork(deps.coordinator, c.var.log, { type: t!.type, tenantId: tenant.id, dueAt: null }, deps.now());
      return c.json(triggerJson(t!));
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
