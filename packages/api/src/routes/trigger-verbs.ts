// One trigger, not its whole job: cancel a pending or running trigger, re-run a finished one.
import { cancelTrigger, rerunTrigger } from "../commands/trigger-verbs.ts";
import { route } from "../route.ts";
import { rerunTriggerBody } from "../schemas.ts";
import { triggerJson } from "../serialize.ts";
import { jsonBody } from "../validate.ts";

const TRIGGER_ID = { id: "The trigger id" };

export const triggerVerbRoutes = [
  route({
    method: "post",
    path: "/v1/triggers/:id/cancel",
    summary:
      "Cancel a pending or running trigger: a pending one never runs, a running one's request is cut and its attempt recorded cancelled, never retried",
    params: TRIGGER_ID,
    ok: { status: 200, description: "The trigger, cancelled (reason cancelled_by_user)", json: "Trigger" },
    errors: [404, 409],
    handler: async (c) => c.json(triggerJson(await cancelTrigger(c.var, c.var.tenant.id, c.req.param("id")))),
  }),
  route({
    method: "post",
    path: "/v1/triggers/:id/rerun",
    summary:
      "Re-run a finished trigger as a new trigger of its job, optionally with another payload (or a request target's body) for that run alone",
    params: TRIGGER_ID,
    body: { name: "RerunTrigger", optional: true, example: { payload: { orderId: 42 } } },
    ok: { status: 201, description: "The new trigger (triggeredBy rerun, rerunOf the original)", json: "Trigger" },
    errors: [400, 404, 409, 413],
    handler: async (c) => {
      const body = await jsonBody(c, rerunTriggerBody);
      const t = await rerunTrigger(c.var, c.var.tenant, c.req.param("id"), body);
      return c.json(triggerJson(t), 201);
    },
  }),
];
