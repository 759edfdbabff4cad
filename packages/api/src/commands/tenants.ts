// Tenant commands: create, change quotas or status (JSON Merge Patch), rotate the signing secret, and
// end the tenant's portal links and sessions, for the admin API and the dashboard alike.
import { generateSigningSecret, newId } from "@fairway/core";
import {
  createTenant as insertTenant,
  getTenant,
  revokePortalSessions as revokePortalSessionsRow,
  rotateSigningSecret as rotateSigningSecretRow,
  updateTenant as updateTenantRow,
} from "@fairway/store";
import type { z } from "zod";
import { ApiError, notFound } from "../errors.ts";
import { applyMergePatch, parseMerged, type Patch } from "../merge-patch.ts";
import { type createTenantBody, tenantState } from "../schemas.ts";
import { tenantJson } from "../serialize.ts";
import type { CommandContext } from "./jobs.ts";

/** How long a rotated-out signing secret keeps signing deliveries. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

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
