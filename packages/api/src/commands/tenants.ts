// Tenant commands: create, and change quotas or status (JSON Merge Patch), for the admin API and the
// dashboard alike.
import { generateSigningSecret, newId } from "@fairway/core";
import { createTenant as insertTenant, getTenant, updateTenant as updateTenantRow } from "@fairway/store";
import type { z } from "zod";
import { ApiError, notFound } from "../errors.ts";
import { applyMergePatch, parseMerged, type Patch } from "../merge-patch.ts";
import { type createTenantBody, tenantState } from "../schemas.ts";
import { tenantJson } from "../serialize.ts";
import type { CommandContext } from "./jobs.ts";

/** A new tenant and its signing secret (shown once); 409 when the id is taken. */
export async function createTenant({ deps, log }: CommandContext, body: z.infer<typeof createTenantBody>) {
  const signingSecret = generateSigningSecret();
  const row = await insertTenant(deps.db, { ...body, id: body.id ?? newId("ten").toLowerCase(), signingSecret });
  if (!row) throw new ApiError(409, "tenant_exists", `a tenant with id "${body.id}" already exists`);
  log.info("tenant created", { tenantId: row.id });
  return { row, signingSecret };
}

/** The tenant's fields with the patch merged in are checked as a whole; only the fields the patch
 *  names are written. null clears ratePerSecond and burst (no rate limit). */
export async function updateTenant({ deps, log }: CommandContext, id: string, patch: Patch) {
  const current = await getTenant(deps.db, id);
  if (!current) throw notFound("tenant");
  const { id: _id, createdAt: _c, updatedAt: _u, ...editable } = tenantJson(current);
  const merged = parseMerged(tenantState, applyMergePatch(editable, patch));
  const fields = Object.keys(patch) as Array<keyof typeof merged>;
  const changes = Object.fromEntries(fields.map((k) => [k, merged[k] ?? null]));
  const t = await updateTenantRow(deps.db, current.id, changes);
  if (!t) throw notFound("tenant");
  log.info("tenant updated", { tenantId: t.id, fields });
  return t;
}
