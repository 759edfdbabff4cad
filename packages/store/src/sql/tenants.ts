// Tenants, API keys and signing secrets (admin API). Keys are stored only as sha256 hashes.
import { and, asc, eq, gt, isNull, sql } from "drizzle-orm";
import { isDistributed } from "../citus.ts";
import { query, type Db } from "../db.ts";
import { apiKeys, tenants } from "../schema.ts";
import { rowShape } from "./columns.ts";
import { insertTenantWithPlan, OWN_FIELDS, writeTenantOwn, type OwnField, type OwnValues } from "./plans.ts";

export type TenantRow = typeof tenants.$inferSelect;
export type TenantInsert = typeof tenants.$inferInsert;
export type TenantPatch = Partial<
  Pick<
    TenantRow,
    | "name"
    | "status"
    | "maxInFlight"
    | "weight"
    | "ratePerSecond"
    | "burst"
    | "maxJobs"
    | "maxPayloadBytes"
    | "historyRetentionDays"
    | "deadRetentionDays"
    | "consecutiveFailureLimit"
  >
>;

/** Splits a row's quota fields (the tenant's own values) from its other columns. */
function splitOwn<T extends Record<string, unknown>>(
  t: T,
): { own: OwnValues; remove: OwnField[]; rest: Record<string, unknown> } {
  const own: OwnValues = {};
  const remove: OwnField[] = [];
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t)) {
    if (v === undefined) continue;
    if (!(k in OWN_FIELDS)) rest[k] = v;
    else if (v === null) remove.push(k as OwnField);
    else own[k as OwnField] = v as number;
  }
  return { own, remove, rest };
}

/** Insert a tenant; its quota fields are its own values (docs/plans.md), its plan is `planId`. null
 *  when the id is taken, "unknown_plan" (nothing written) when there is no such plan. */
export async function createTenant(db: Db, t: TenantInsert): Promise<TenantRow | "unknown_plan" | null> {
  const { own, rest } = splitOwn(t);
  return insertTenantWithPlan(db, rest as TenantInsert, own);
}

export async function getTenant(db: Db, id: string): Promise<TenantRow | null> {
  const [row] = await db.select().from(tenants).where(eq(tenants.id, id));
  return row ?? null;
}

export async function listTenants(db: Db, after: string | null, limit: number): Promise<TenantRow[]> {
  return db
    .select()
    .from(tenants)
    .where(after ? gt(tenants.id, after) : undefined)
    .orderBy(asc(tenants.id))
    .limit(limit);
}

/** Writes the patch's fields: a quota field's number becomes the tenant's own value, its null removes
 *  it (the plan's value, else the default, applies: for ratePerSecond and burst without a plan, no rate
 *  limit); `planId` moves the tenant to another plan (null: none). The effective quota is rewritten in
 *  the same transaction, and a changed rate resets the bucket so it applies from the next claim. A
 *  suspension ends every portal session for good. null when there is no tenant, "unknown_plan"
 *  (nothing written) when there is no such plan. */
export async function updateTenant(
  db: Db,
  id: string,
  patch: TenantPatch & { planId?: string | null },
): Promise<TenantRow | "unknown_plan" | null> {
  const { planId, ...fields } = patch;
  const { own, remove, rest } = splitOwn(fields);
  return writeTenantOwn(db, id, { set: own, remove, columns: rest, ...(planId !== undefined ? { planId } : {}) });
}

/** Rotate: the new secret signs from now on; the old one also signs until `overlapMs` has passed. */
export async function rotateSigningSecret(db: Db, id: string, secret: string, overlapMs: number) {
  const [row] = await db
    .update(tenants)
    .set({
      previousSigningSecret: sql`${tenants.signingSecret}`,
      previousSecretExpiresAt: new Date(Date.now() + overlapMs),
      signingSecret: secret,
      portalEpoch: sql`${tenants.portalEpoch} + 1`,
      updatedAt: new Date(),
    })
    .where(eq(tenants.id, id))
    .returning();
  return row ?? null;
}

/** Ends every portal link and session of the tenant (they carry the old epoch); the tenant, or null. */
export async function revokePortalSessions(db: Db, id: string): Promise<TenantRow | null> {
  const [row] = await db
    .update(tenants)
    .set({ portalEpoch: sql`${tenants.portalEpoch} + 1`, updatedAt: new Date() })
    .where(eq(tenants.id, id))
    .returning();
  return row ?? null;
}

export async function createApiKey(db: Db, key: { id: string; tenantId: string; prefix: string; hash: string }) {
  const [row] = await db.insert(apiKeys).values(key).returning();
  return row;
}

export async function revokeApiKey(db: Db, tenantId: string, keyId: string): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.tenantId, tenantId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}

const tenantShape = rowShape<TenantRow>(tenants, "t");

/** Look a key up by its hash; revoked keys never match. Records last use at most once a minute. Runs on
 *  every tenant request, so it is one prepared statement (a drizzle builder is parsed and planned each
 *  time); nothing is cached, so a revoked key is refused on its next request in every process.
 *
 *  On a Citus cluster the key (a reference table, read on the coordinator) is found first and then its
 *  tenant on its own shard: a join would read every shard, and one worker down would refuse every
 *  tenant. Recording last use writes the reference table on every node; with one down that write
 *  fails, and the request goes on without it. */
export async function authenticateKey(db: Db, hash: string): Promise<{ keyId: string; tenant: TenantRow } | null> {
  const distributed = await isDistributed(db);
  const [row] = await query<
    Record<string, unknown> & { keyId: string; keyLastUsedAt: string | Date | null; keyTenantId: string }
  >(
    db,
    distributed
      ? sql`SELECT k.id AS "keyId", k.last_used_at AS "keyLastUsedAt", k.tenant_id AS "keyTenantId"
              FROM api_keys k WHERE k.hash = ${hash} AND k.revoked_at IS NULL`
      : sql`
    SELECT k.id AS "keyId", k.last_used_at AS "keyLastUsedAt", ${tenantShape.list}
      FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
     WHERE k.hash = ${hash} AND k.revoked_at IS NULL`,
  );
  if (!row) return null;
  const { keyId, keyLastUsedAt, keyTenantId, ...tenantColumns } = row;
  const tenant = distributed ? await getTenant(db, keyTenantId) : tenantShape.rows([tenantColumns])[0];
  if (!tenant) return null;
  const lastUsed = keyLastUsedAt == null ? null : new Date(keyLastUsedAt);
  const stale = !lastUsed || Date.now() - lastUsed.getTime() > 60_000;
  if (stale) {
    const touch = db.update(apiKeys).set({ lastUsedAt: new Date() }).where(eq(apiKeys.id, keyId));
    if (distributed) await touch.catch(() => {});
    else await touch;
  }
  return { keyId, tenant };
}
