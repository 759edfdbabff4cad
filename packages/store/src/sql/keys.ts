// Fairness keys (docs/fairness.md, "Fairness keys"): a tenant's defaults for its keys (tenants.key_*),
// per-key overrides and what each key is doing (tenant_keys, schema.ts). The claim reads the same
// columns (claim-keys.ts, keyedIds); these are the reads and writes behind the API.
import { sql, type SQL } from "drizzle-orm";
import { jsonColumn, query, type Db } from "../db.ts";
import { writeTenantOwn, type OwnField, type OwnValues } from "./plans.ts";

export type KeyPolicy = { maxInFlight: number | null; ratePerSecond: number | null; weight: number };
/** A field absent = the tenant's default applies. */
export type KeyOverride = Partial<KeyPolicy>;
export type KeyInfo = {
  key: string;
  override: KeyOverride | null;
  /** The policy in force: the override's fields over the tenant's defaults. */
  policy: KeyPolicy;
  running: number;
  due: number;
  oldestDueLagMs: number | null;
  /** 0..1 of the tenant's recent worker time (KEY_WORK_HALF_LIFE_S). */
  workerTimeShare: number;
};

/** A key's settled worker time halves every this many seconds (tenant_keys.work_ms): "recent". */
const KEY_WORK_HALF_LIFE_S = 300;

const DEFAULTS: KeyPolicy = { maxInFlight: null, ratePerSecond: null, weight: 1 };

/** A key's recent worker time, decayed to now. In float8: extract() gives numeric, whose power() cost the
 *  settle more than the rest of its key update. */
export const decayedWork = (k: SQL) =>
  sql`(${k}.work_ms * power(0.5::float8, extract(epoch FROM now() - ${k}.work_at)::float8 / ${sql.raw(String(KEY_WORK_HALF_LIFE_S))}))`;

export async function getKeyDefaults(db: Db, tenantId: string): Promise<KeyPolicy> {
  const [row] = await query<PolicyRow>(
    db,
    sql`SELECT key_max_in_flight AS m, key_rate_per_second AS r, key_weight AS w FROM tenants WHERE id = ${tenantId}`,
  );
  return row ? policyOf(row) : { ...DEFAULTS };
}

/** Sets the tenant's own key defaults: a number is its own value, null removes it (its plan's value,
 *  else no cap, no rate, weight 1, applies). Returns the defaults in force. */
export async function setKeyDefaults(
  db: Db,
  tenantId: string,
  policy: { maxInFlight: number | null; ratePerSecond: number | null; weight: number | null },
): Promise<KeyPolicy> {
  const fields = { maxInFlight: "keyMaxInFlight", ratePerSecond: "keyRatePerSecond", weight: "keyWeight" } as const;
  const set: OwnValues = {};
  const remove: OwnField[] = [];
  for (const [f, own] of Object.entries(fields) as Array<[keyof typeof fields, OwnField]>) {
    const v = policy[f];
    if (v === null) remove.push(own);
    else set[own] = v;
  }
  await writeTenantOwn(db, tenantId, { set, remove });
  return getKeyDefaults(db, tenantId);
}

export async function putKeyOverride(db: Db, tenantId: string, key: string, override: KeyOverride): Promise<KeyInfo> {
  const o: KeyOverride = {};
  if (override.maxInFlight !== undefined) o.maxInFlight = override.maxInFlight;
  if (override.ratePerSecond !== undefined) o.ratePerSecond = override.ratePerSecond;
  if (override.weight !== undefined) o.weight = override.weight;
  await query(
    db,
    sql`INSERT INTO tenant_keys (tenant_id, key, override) VALUES (${tenantId}, ${key}, ${JSON.stringify(o)}::jsonb)
        ON CONFLICT (tenant_id, key) DO UPDATE SET override = excluded.override`,
  );
  return getKeyInfo(db, tenantId, key);
}

/** False: the key had no override. */
export async function deleteKeyOverride(db: Db, tenantId: string, key: string): Promise<boolean> {
  const rows = await query(
    db,
    sql`UPDATE tenant_keys SET override = NULL
         WHERE tenant_id = ${tenantId} AND key = ${key} AND override IS NOT NULL RETURNING 1`,
  );
  return rows.length > 0;
}

/** A key never seen: zeros, no override, the tenant's defaults. */
export async function getKeyInfo(db: Db, tenantId: string, key: string): Promise<KeyInfo> {
  const rows = await infoRows(db, tenantId, sql`SELECT ${key}::text COLLATE "C" AS key`, sql`ORDER BY 1`);
  return rows[0];
}

/** Keys with queued or running work, and keys with an override, ordered by key (byte order). */
export async function listKeys(
  db: Db,
  tenantId: string,
  opts: { cursor?: string; limit: number },
): Promise<{ data: KeyInfo[]; nextCursor: string | null }> {
  const limit = Math.max(1, Math.min(1000, opts.limit));
  const rows = await infoRows(
    db,
    tenantId,
    sql`SELECT k.key FROM tenant_keys k
         WHERE k.tenant_id = ${tenantId} AND (k.queued > 0 OR k.running > 0 OR k.override IS NOT NULL)
           ${opts.cursor === undefined ? sql`` : sql`AND k.key > ${opts.cursor}`}
         ORDER BY k.key LIMIT ${limit + 1}`,
    sql`ORDER BY 1`,
  );
  const data = rows.slice(0, limit);
  return { data, nextCursor: rows.length > limit ? data[data.length - 1].key : null };
}

/** The tenant's keys with the most recent worker time, most first (dashboard, metrics). */
export async function topKeys(db: Db, tenantId: string, n: number): Promise<KeyInfo[]> {
  return infoRows(
    db,
    tenantId,
    sql`SELECT k.key FROM tenant_keys k WHERE k.tenant_id = ${tenantId} AND k.work_ms > 0
         ORDER BY ${decayedWork(sql`k`)} DESC, k.key LIMIT ${Math.max(0, n)}`,
    sql`ORDER BY share DESC, 1`,
  );
}

interface PolicyRow {
  m: number | null;
  r: number | null;
  w: number;
}

function policyOf(row: PolicyRow): KeyPolicy {
  return { maxInFlight: row.m, ratePerSecond: row.r == null ? null : Number(row.r), weight: Number(row.w) };
}

interface InfoRow {
  key: string;
  override: unknown;
  m: number | null;
  r: number | null;
  w: number;
  running: number;
  due: number;
  lag_ms: number | null;
  share: number;
}

/** KeyInfo for the keys `keys` selects (a column `key`). Due work is counted per pool the tenant has
 *  (trigger_queue_key_idx leads with tenant and pool; pools are few). */
async function infoRows(db: Db, tenantId: string, keys: SQL, order: SQL): Promise<KeyInfo[]> {
  const rows = await query<InfoRow>(
    db,
    sql`
    WITH sel AS (${keys}),
    total AS (SELECT coalesce(sum(${decayedWork(sql`a`)}), 0) AS w FROM tenant_keys a WHERE a.tenant_id = ${tenantId})
    SELECT s.key, k.override,
           CASE WHEN k.override ? 'maxInFlight' THEN (k.override->>'maxInFlight')::int ELSE t.key_max_in_flight END AS m,
           CASE WHEN k.override ? 'ratePerSecond' THEN (k.override->>'ratePerSecond')::float8 ELSE t.key_rate_per_second END AS r,
           coalesce((k.override->>'weight')::float8, t.key_weight) AS w,
           greatest(0, coalesce(k.running, 0)) AS running,
           coalesce(d.n, 0)::int AS due,
           (extract(epoch FROM now() - d.oldest) * 1000)::float8 AS lag_ms,
           CASE WHEN (SELECT w FROM total) > 0 AND k.key IS NOT NULL
                THEN ${decayedWork(sql`k`)} / (SELECT w FROM total) ELSE 0 END AS share
      FROM sel s
      JOIN tenants t ON t.id = ${tenantId}
      LEFT JOIN tenant_keys k ON k.tenant_id = ${tenantId} AND k.key = s.key
      LEFT JOIN LATERAL (
        SELECT sum(x.n) AS n, min(x.oldest) AS oldest FROM pools p CROSS JOIN LATERAL (
          SELECT count(*) AS n, min(q.next_attempt_at) AS oldest FROM trigger_queue q
           WHERE q.tenant_id = ${tenantId} AND q.type = p.type AND q.key = s.key AND q.next_attempt_at <= now()) x
         WHERE coalesce(k.queued, 0) > 0) d ON true
    ${order}`,
  );
  return rows.map((r) => ({
    key: r.key,
    override: r.override == null ? null : (jsonColumn(r.override as string) as KeyOverride),
    policy: policyOf(r),
    running: Number(r.running),
    due: Number(r.due),
    oldestDueLagMs: r.lag_ms == null ? null : Math.max(0, Number(r.lag_ms)),
    workerTimeShare: Math.min(1, Math.max(0, Number(r.share))),
  }));
}
