// Quota plans (admin token, docs/plans.md): a plan is the quota values its tenants take where they
// set none of their own. Changes are commands (commands/plans.ts); the routes parse and read.
import { getPlan, listPlans, planTenantCounts } from "@fairway/store";
import { createPlan, deletePlan, updatePlan } from "../commands/plans.ts";
import { notFound } from "../errors.ts";
import { mergePatchBody } from "../merge-patch.ts";
import { route } from "../route.ts";
import { pageQuery } from "../schemas.ts";
import { page, planJson } from "../serialize.ts";
import { queryOf, rawJsonBody } from "../validate.ts";

const PLAN_ID = { id: "The plan id, e.g. pro" };

export const planRoutes = [
  route({
    method: "post",
    path: "/v1/admin/plans",
    summary: "Create a quota plan",
    body: { name: "CreatePlan", example: { id: "pro", name: "Pro", maxInFlight: 50, weight: 4, ratePerSecond: 20 } },
    ok: { status: 201, description: "The plan", json: "Plan" },
    errors: [400, 409],
    handler: async (c) => c.json(planJson(await createPlan(c.var, await rawJsonBody(c)), 0), 201),
  }),
  route({
    method: "get",
    path: "/v1/admin/plans",
    summary: "List quota plans",
    query: pageQuery,
    ok: { status: 200, description: "A page of plans", json: "PlanPage" },
    errors: [400],
    handler: async (c) => {
      const q = queryOf(c, pageQuery);
      const rows = await listPlans(c.var.deps.db, q.cursor ?? null, q.limit);
      const counts = await planTenantCounts(
        c.var.deps.db,
        rows.map((r) => r.id),
      );
      return c.json(page(rows, q.limit, (r) => planJson(r, counts.get(r.id) ?? 0)));
    },
  }),
  route({
    method: "get",
    path: "/v1/admin/plans/:id",
    summary: "A quota plan",
    params: PLAN_ID,
    ok: { status: 200, description: "The plan", json: "Plan" },
    errors: [404],
    handler: async (c) => {
      const p = await getPlan(c.var.deps.db, c.req.param("id"));
      if (!p) throw notFound("plan");
      const counts = await planTenantCounts(c.var.deps.db, [p.id]);
      return c.json(planJson(p, counts.get(p.id) ?? 0));
    },
  }),
  /** JSON Merge Patch: the plan with the patch merged in is checked as a whole; its tenants take the
   *  new values in the same transaction, from their next claim. null removes a value. */
  route({
    method: "patch",
    path: "/v1/admin/plans/:id",
    summary: "Change a quota plan and every tenant on it (JSON Merge Patch)",
    params: PLAN_ID,
    body: { name: "UpdatePlan", mergePatch: true, example: { maxInFlight: 100 } },
    ok: { status: 200, description: "The plan", json: "Plan" },
    errors: [400, 404],
    handler: async (c) => {
      const { plan, tenants } = await updatePlan(c.var, c.req.param("id"), await mergePatchBody(c));
      return c.json(planJson(plan, tenants));
    },
  }),
  route({
    method: "delete",
    path: "/v1/admin/plans/:id",
    summary: "Delete a quota plan no tenant is on",
    params: PLAN_ID,
    ok: { status: 200, description: "Deleted", json: "DeletedPlan" },
    errors: [404, 409],
    handler: async (c) => c.json(await deletePlan(c.var, c.req.param("id"))),
  }),
];
