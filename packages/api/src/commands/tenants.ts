// Tenant commands: create, change quotas or status (JSON Merge Patch), rotate the signing secret, and
// end the tenant's portal links and sessions, for the admin API and the dashboard alike.
import { generateSigningSecret, newId } from "@fairway/core";
import {
  createTenant as insertTenant,
  getTenant,
  revokePortalSessions as revokePortalSessionsRow,
  rotateSigningSecret as rotateSigningSecretRow,
  updateTenant as updateTenantRow,
  type TenantRow,
} from "@fairway/store";
import type { z } from "zod";
import { ApiError, notFound } from "../errors.ts";
import { applyMergePatch, parseMerged, type Patch } from "../merge-patch.ts";
import { type createTenantBody, tenantState } from "../schemas.ts";
import { overridesJson } from "../serialize.ts";
import type { CommandContext } from "./jobs.ts";

/** How long a rotated-out signing secret keeps signing deliveries. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** 400 unknown_plan: a tenant names a plan that does not exist (nothing was written). */
const unknownPlan = (id: string) =>
  new ApiError(
    400,
    "unknown_plan",
    `plan: there is no plan "${id}"; send the id of one GET /v1/admin/plans lists, or create it with POST /v1/admin/plans`,
  );

/** A new tenant and its signing secret (shown once); its quota values are its own (they win over its
 *  plan's). 409 when the id is taken, 400 unknown_plan when the plan does not exist. */
export async function createTenant({ deps, log }: CommandContext, body: z.infer<typeof createTenantBody>) {
  const signingSecret = generateSigningSecret();
  const { plan, ...fields } = body;
  const row = await insertTenant(deps.db, {
    ...fields,
    id: body.id ?? newId("ten").toLowerCase(),
    planId: plan ?? null,
    signingSecret,
  });
  if (row === "unknown_plan") throw unknownPlan(plan!);
  if (!row) throw new ApiError(409, "tenant_exists", `a tenant with id "${body.id}" already exists`);
  log.info("tenant created", { tenantId: row.id, plan: row.planId });
  return { row, signingSecret };
}

/** The tenant as a merge patch sees it: its own quota values, its plan and the fields it cannot clear. */
function editableTenant(t: TenantRow) {
  const { keyDefaults: _k, ...own } = overridesJson(t);
  return {
    name: t.name,
    status: t.status,
    ...(t.planId !== null ? { plan: t.planId } : {}),
    ...own,
    deadRetentionDays: t.deadRetentionDays,
    consecutiveFailureLimit: t.consecutiveFailureLimit,
  };
}

/** The tenant's fields with the patch merged in are checked as a whole; only the fields the patch
 *  names are written. A quota value becomes the tenant's own; null removes it (its plan's value, else
 *  the default, applies: without a plan, null ratePerSecond and burst mean no rate limit). "plan" moves
 *  the tenant to another plan (null: none). */
export async function updateTenant({ deps, log }: CommandContext, id: string, patch: Patch) {
  const current = await getTenant(deps.db, id);
  if (!current) throw notFound("tenant");
  const merged = parseMerged(tenantState, applyMergePatch(editableTenant(current), patch));
  const fields = Object.keys(patch) as Array<keyof typeof merged>;
  const changes = Object.fromEntries(fields.filter((k) => k !== "plan").map((k) => [k, merged[k] ?? null]));
  const planId = "plan" in patch ? { planId: merged.plan ?? null } : {};
  const t = await updateTenantRow(deps.db, current.id, { ...changes, ...planId });
  if (t === "unknown_plan") throw unknownPlan(String(merged.plan));
  if (!t) throw notFound("tenant");
  log.info("tenant updated", { tenantId: t.id, fields });
  return t;
}

/** A new signing secret; the previous one keeps signing for ROTATION_OVERLAP_MS, and the tenant's
 *  portal links and sessions end (they are signed per tenant epoch). 404 when there is no tenant. */
export async function rotateSigningSecret({ deps, log }: CommandContext, id: string) {
  const secret = generateSigningSecret();
  const t = await rotateSigningSecretRow(deps.db, id, secret, ROTATION_OVERLAP_MS);
  if (!t) throw notFound("tenant");
  log.info("signing secret rotated", { tenantId: t.id });
  return { signingSecret: secret, previousSecretExpiresAt: t.previousSecretExpiresAt };
}

/** Ends every portal link and session of the tenant now. 404 when there is no tenant. */
export async function revokePortalSessions({ deps, log }: CommandContext, id: string) {
  const t = await revokePortalSessionsRow(deps.db, id);
  if (!t) throw notFound("tenant");
  log.info("portal sessions revoked", { tenantId: t.id });
  return { tenantId: t.id, revokedAt: new Date(deps.now()).toISOString() };
}
