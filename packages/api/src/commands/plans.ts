// Quota plan commands (docs/plans.md): create, change (JSON Merge Patch) and delete a plan, for the
// admin API and the dashboard alike. A plan's change reaches every tenant on it in the same transaction
// (store sql/plans.ts); a refusal is an ApiError and writes nothing.
import {
  createPlan as insertPlan,
  deletePlan as deletePlanRow,
  updatePlan as updatePlanRow,
  type PlanInsert,
  type PlanRow,
} from "@fairway/store";
import type { z } from "zod";
import { ApiError, fromZod, notFound } from "../errors.ts";
import { applyMergePatch, parseMerged, type Patch } from "../merge-patch.ts";
import { planState } from "../schemas.ts";
import type { CommandContext } from "./jobs.ts";

type PlanState = z.infer<typeof planState>;

/** The plan's columns from its API shape: every field, null where the plan sets nothing. */
function planColumns(p: PlanState): Omit<PlanInsert, "id"> {
  return {
    name: p.name ?? null,
    maxInFlight: p.maxInFlight ?? null,
    weight: p.weight ?? null,
    ratePerSecond: p.ratePerSecond ?? null,
    burst: p.burst ?? null,
    maxJobs: p.maxJobs ?? null,
    maxPayloadBytes: p.maxPayloadBytes ?? null,
    historyDays: p.historyDays ?? null,
    keyMaxInFlight: p.keyDefaults?.maxInFlight ?? null,
    keyRatePerSecond: p.keyDefaults?.ratePerSecond ?? null,
    keyWeight: p.keyDefaults?.weight ?? null,
  };
}

/** A plan in its API shape without nulls: what a merge patch merges into. */
function editablePlan(p: PlanRow): Patch {
  const keyDefaults = Object.fromEntries(
    Object.entries({ maxInFlight: p.keyMaxInFlight, ratePerSecond: p.keyRatePerSecond, weight: p.keyWeight }).filter(
      ([, v]) => v !== null,
    ),
  );
  const top = Object.fromEntries(
    Object.entries({
      id: p.id,
      name: p.name,
      maxInFlight: p.maxInFlight,
      weight: p.weight,
      ratePerSecond: p.ratePerSecond,
      burst: p.burst,
      maxJobs: p.maxJobs,
      maxPayloadBytes: p.maxPayloadBytes,
      historyDays: p.historyDays,
    }).filter(([, v]) => v !== null),
  );
  return Object.keys(keyDefaults).length > 0 ? { ...top, keyDefaults } : top;
}

/** A new plan from the create body; 409 plan_exists when the id is taken. */
export async function createPlan({ deps, log }: CommandContext, raw: unknown): Promise<PlanRow> {
  const r = planState.safeParse(raw);
  if (!r.success) throw fromZod(r.error);
  const row = await insertPlan(deps.db, { id: r.data.id, ...planColumns(r.data) });
  if (!row) {
    throw new ApiError(
      409,
      "plan_exists",
      `a plan with id "${r.data.id}" already exists; change it with PATCH /v1/admin/plans/${r.data.id}`,
    );
  }
  log.info("plan created", { planId: row.id });
  return row;
}

/** Merges the patch into the plan as it is under its lock and checks the whole; the plan's tenants take
 *  the new values in the same transaction, from their next claim. null in the patch removes a value
 *  (the default applies to tenants that set none of their own). */
export async function updatePlan(
  { deps, log }: CommandContext,
  id: string,
  patch: Patch,
): Promise<{ plan: PlanRow; tenants: number }> {
  if ("id" in patch && patch.id !== id) {
    throw new ApiError(400, "validation_error", "id: a plan's id cannot change; create a new plan instead");
  }
  const out = await updatePlanRow(deps.db, id, (current) =>
    planColumns(parseMerged(planState, applyMergePatch(editablePlan(current), patch))),
  );
  if (!out) throw notFound("plan");
  log.info("plan updated", { planId: id, fields: Object.keys(patch), tenants: out.tenants });
  return out;
}

/** Deletes a plan no tenant is on; 409 plan_in_use while one is (nothing is written). */
export async function deletePlan({ deps, log }: CommandContext, id: string): Promise<{ id: string; deleted: true }> {
  const out = await deletePlanRow(deps.db, id);
  if (out === null) throw notFound("plan");
  if (out !== "deleted") {
    throw new ApiError(
      409,
      "plan_in_use",
      `plan "${id}" has ${out.inUse} tenant${out.inUse === 1 ? "" : "s"}; move them to another plan (PATCH /v1/admin/tenants/{id} with "plan") or off plans ("plan": null) first`,
    );
  }
  log.info("plan deleted", { planId: id });
  return { id, deleted: true };
}
