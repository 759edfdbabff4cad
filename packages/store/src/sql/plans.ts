// Quota plans (tiers) and the tenant's effective quota. A tenant stores the values set on it itself
// (tenants.own) and its plan (tenants.plan_id); its quota columns (max_in_flight, weight, key_weight, …)
// hold the effective value of each field: its own, else its plan's, else the default. The claim reads
// those columns alone and never this table, so every write of a tenant's own values, of its plan or of
// a plan rewrites the effective columns in the same transaction.
//
// Lock order, so that no two writers wait on each other: the plan row first, then tenant rows. A tenant
// write takes its plan FOR SHARE (a plan cannot change or go while a tenant is given it); a plan's
// change and its delete take it FOR UPDATE. On a Citus cluster plans is a reference table and tenants
// is distributed: a plan's change is one multi-shard UPDATE inside the same transaction.
import { asc, eq, gt, sql, type SQL } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { plans, tenants } from "../schema.ts";

export type PlanRow = typeof plans.$inferSelect;

/** The quota fields a plan sets and a tenant may override, with the tenants column each is effective
 *  in, the plans column its plan's value is in, its default and its SQL type. */
export const OWN_FIELDS = {
  maxInFlight: { tenant: "max_in_flight", plan: "max_in_flight", fallback: 10, type: "int" },
  weight: { tenant: "weight", plan: "weight", fallback: 1, type: "float8" },
  ratePerSecond: { tenant: "rate_per_second", plan: "rate_per_second", fallback: null, type: "float8" },
  burst: { tenant: "burst", plan: "burst", fallback: null, type: "int" },
  maxJobs: { tenant: "max_jobs", plan: "max_jobs", fallback: 10_000, type: "int" },
  maxPayloadBytes: { tenant: "max_payload_bytes", plan: "max_payload_bytes", fallback: 262_144, type: "int" },
  historyRetentionDays: { tenant: "history_retention_days", plan: "history_days", fallback: 30, type: "int" },
  keyMaxInFlight: { tenant: "key_max_in_flight", plan: "key_max_in_flight", fallback: null, type: "int" },
  keyRatePerSecond: { tenant: "key_rate_per_second", plan: "key_rate_per_second", fallback: null, type: "float8" },
  keyWeight: { tenant: "key_weight", plan: "key_weight", fallback: 1, type: "float8" },
} as const;
export type OwnField = keyof typeof OWN_FIELDS;
/** The values set on a tenant itself; an absent field takes its plan's value, else the default. */
export type OwnValues = Partial<Record<OwnField, number>>;
/** A plan's value of each field; null: the plan sets none, the default applies. */
type PlanValues = Record<OwnField, number | null>;

const FIELDS = Object.keys(OWN_FIELDS) as OwnField[];

/** A plan row's values by tenant field (its history_days is a tenant's history_retention_days). */
function planValues(p: PlanRow | null): PlanValues {
  const out = {} as PlanValues;
  for (const f of FIELDS) {
    out[f] = p
      ? ((p as unknown as Record<string, number | null>)[f === "historyRetentionDays" ? "historyDays" : f] ?? null)
      : null;
  }
  return out;
}

/** The effective value of `f` from `own` (a jsonb expression) and the plan's values. */
function effectiveValue(f: OwnField, own: SQL, plan: PlanValues): SQL {
  const d = OWN_FIELDS[f];
  const t = sql.raw(d.type);
  return sql`COALESCE((${own} ->> ${f})::${t}, ${plan[f]}::${t}, ${d.fallback}::${t})`;
}

/** SET items writing the effective columns of `fields` from `own` (a jsonb expression) and the plan's
 *  values; the other columns keep theirs. The rate bucket is reset when the effective rate or burst
 *  changes, so the new rate applies from the next claim (in a SET, the columns read their values before
 *  the update). */
function effectiveSet(own: SQL, plan: PlanValues, fields: readonly OwnField[] = FIELDS): SQL {
  const value = (f: OwnField) => (fields.includes(f) ? effectiveValue(f, own, plan) : sql.raw(OWN_FIELDS[f].tenant));
  const items = fields.map((f) => sql`${sql.raw(OWN_FIELDS[f].tenant)} = ${value(f)}`);
  const rateChanged = sql`(${value("ratePerSecond")}, ${value("burst")}) IS DISTINCT FROM (rate_per_second, burst)`;
  items.push(sql`rate_tokens = CASE WHEN ${rateChanged} THEN NULL ELSE rate_tokens END`);
  items.push(sql`rate_updated_at = CASE WHEN ${rateChanged} THEN NULL ELSE rate_updated_at END`);
  return sql.join(items, sql`, `);
}

/** The plan `id` locked for the rest of the transaction: FOR SHARE by a tenant's write, FOR UPDATE by
 *  the plan's own change or delete. */
async function lockPlan(db: Db, id: string, mode: "share" | "update"): Promise<PlanRow | null> {
  const [row] = await db
    .select()
    .from(plans)
    .where(eq(plans.id, id))
    .for(mode === "share" ? "share" : "update");
  return row ?? null;
}

export type TenantOwnChange = {
  /** Own values set (or replaced). */
  set: OwnValues;
  /** Own values removed: the plan's value, else the default, applies again. */
  remove: OwnField[];
  /** A new plan (null: none); absent: the plan stays. */
  planId?: string | null;
  /** Other columns of the tenant, written as they are (name, status, retention of dead triggers, …). */
  columns?: Record<string, unknown>;
};

/** Writes a tenant's own values, plan and other columns and its effective quota, in one transaction.
 *  Own values are merged in the statement (own || set − remove), so two changes of different fields
 *  both land. The effective columns rewritten are those of the fields named, or every one when the
 *  plan changes; the others keep their values. "unknown_plan" (nothing written) when the plan named does not exist; null when there is
 *  no tenant. */
export async function writeTenantOwn(
  db: Db,
  id: string,
  change: TenantOwnChange,
): Promise<typeof tenants.$inferSelect | "unknown_plan" | null> {
  return db.transaction(async (tx) => {
    for (let tries = 0; ; tries++) {
      const [cur] = await tx.select({ planId: tenants.planId }).from(tenants).where(eq(tenants.id, id));
      if (!cur) return null;
      const planId = change.planId === undefined ? cur.planId : change.planId;
      const plan = planId === null ? null : await lockPlan(tx, planId, "share");
      if (planId !== null && !plan) return "unknown_plan";
      const own = sql`((${tenants.own} || ${JSON.stringify(change.set)}::jsonb) - ${`{${change.remove.join(",")}}`}::text[])`;
      const keep = change.planId === undefined ? sql` AND plan_id IS NOT DISTINCT FROM ${cur.planId}` : sql``;
      const cols = Object.entries(change.columns ?? {}).map(([k, v]) => {
        const c = (tenants as unknown as Record<string, { name: string }>)[k];
        if (!c?.name) throw new Error(`writeTenantOwn: no tenants column ${k}`);
        return sql`${sql.raw(c.name)} = ${v}`;
      });
      const endPortal = change.columns?.status === "suspended" ? [sql`portal_epoch = portal_epoch + 1`] : [];
      const [row] = await query<Record<string, unknown>>(
        tx,
        sql`UPDATE tenants SET ${sql.join(
          [
            ...cols,
            ...endPortal,
            sql`own = ${own}`,
            sql`plan_id = ${planId}`,
            change.planId === undefined
              ? effectiveSet(own, planValues(plan), [...(Object.keys(change.set) as OwnField[]), ...change.remove])
              : effectiveSet(own, planValues(plan)),
            sql`updated_at = now()`,
          ],
          sql`, `,
        )}
         WHERE id = ${id}${keep} RETURNING id`,
      );
      // The plan moved under a concurrent change between the read and the lock: read it again.
      if (!row && tries < 3) continue;
      if (!row) return null;
      const [t] = await tx.select().from(tenants).where(eq(tenants.id, id));
      return t ?? null;
    }
  });
}

/** Inserts a tenant with its own values and plan, its effective quota computed in the same statement
 *  (with a plan: in a transaction that holds the plan FOR SHARE). null when the id is taken,
 *  "unknown_plan" (nothing written) when the plan does not exist. */
export async function insertTenantWithPlan(
  db: Db,
  t: typeof tenants.$inferInsert,
  own: OwnValues,
): Promise<typeof tenants.$inferSelect | "unknown_plan" | null> {
  const insert = async (q: Db, plan: PlanRow | null) => {
    const ownJson = sql`${JSON.stringify(own)}::jsonb`;
    const values = Object.fromEntries(FIELDS.map((f) => [f, effectiveValue(f, ownJson, planValues(plan))]));
    const [row] = await q
      .insert(tenants)
      .values({ ...t, ...values, own })
      .onConflictDoNothing()
      .returning();
    return row ?? null;
  };
  if (!t.planId) return insert(db, null);
  const planId = t.planId;
  return db.transaction(async (tx) => {
    const plan = await lockPlan(tx, planId, "share");
    return plan ? insert(tx, plan) : "unknown_plan";
  });
}

export type PlanInsert = typeof plans.$inferInsert;

/** null when the id is taken. */
export async function createPlan(db: Db, p: PlanInsert): Promise<PlanRow | null> {
  const [row] = await db.insert(plans).values(p).onConflictDoNothing().returning();
  return row ?? null;
}

export async function getPlan(db: Db, id: string): Promise<PlanRow | null> {
  const [row] = await db.select().from(plans).where(eq(plans.id, id));
  return row ?? null;
}

export async function listPlans(db: Db, after: string | null, limit: number): Promise<PlanRow[]> {
  return db
    .select()
    .from(plans)
    .where(after ? gt(plans.id, after) : undefined)
    .orderBy(asc(plans.id))
    .limit(limit);
}

/** How many tenants each of these plans has. */
export async function planTenantCounts(db: Db, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await query<{ id: string; n: number }>(
    db,
    sql`SELECT plan_id AS id, count(*)::int AS n FROM tenants WHERE plan_id = ANY (${`{${ids.join(",")}}`}::text[]) GROUP BY plan_id`,
  );
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}

/** Changes a plan and, in the same transaction and one statement, the effective quota of every tenant on
 *  it: the statement touches exactly the plan's tenants (found by tenants_plan_idx), one row each, and
 *  holds their row locks until the commit (a claim meanwhile skips them, as it skips any locked
 *  tenant). `next` gets the plan as it is under the lock and returns its new values (it may throw: then
 *  nothing is written). null when there is no plan; else the plan and how many tenants it moved. */
export async function updatePlan(
  db: Db,
  id: string,
  next: (current: PlanRow) => Partial<PlanInsert>,
): Promise<{ plan: PlanRow; tenants: number } | null> {
  return db.transaction(async (tx) => {
    const current = await lockPlan(tx, id, "update");
    if (!current) return null;
    const [plan] = await tx
      .update(plans)
      .set({ ...next(current), id, updatedAt: new Date() })
      .where(eq(plans.id, id))
      .returning();
    const moved = await query<{ id: string }>(
      tx,
      sql`UPDATE tenants SET ${effectiveSet(sql`own`, planValues(plan!))}, updated_at = now()
           WHERE plan_id = ${id} RETURNING id`,
    );
    return { plan: plan!, tenants: moved.length };
  });
}

/** Deletes a plan no tenant is on: "in_use" (nothing written) while one is, null when there is none.
 *  The plan is locked first, so a tenant being given it either commits before the count sees it, or
 *  finds no plan afterwards. */
export async function deletePlan(db: Db, id: string): Promise<"deleted" | { inUse: number } | null> {
  return db.transaction(async (tx) => {
    if (!(await lockPlan(tx, id, "update"))) return null;
    const [c] = await query<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM tenants WHERE plan_id = ${id}`);
    const n = Number(c?.n ?? 0);
    if (n > 0) return { inUse: n };
    await tx.delete(plans).where(eq(plans.id, id));
    return "deleted";
  });
}
