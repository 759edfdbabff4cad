// Bulk seeding straight into Postgres (generate_series, one statement per table), so that setting up
// 50k triggers or 1M jobs takes seconds and is not part of what is measured.
import { sql, type Db } from "@fairway/store";

export interface TenantSpec {
  prefix: string;
  count: number;
  maxInFlight?: number;
  weight?: number;
}

/** Tenants `${prefix}0000…`, a pool row, and for each tenant one cron job of `type`. Its next fire is
 *  far off, so the materializer adds none: seedTriggers() gives it its due fires. (A one-time job, with
 *  its one trigger, would be completed by the first of them.) */
export async function seedTenants(db: Db, t: TenantSpec, type: string): Promise<string[]> {
  const ids = Array.from({ length: t.count }, (_, i) => `${t.prefix}${String(i).padStart(5, "0")}`);
  await db.execute(sql`
    INSERT INTO tenants (id, name, max_in_flight, weight, signing_secret, max_jobs)
    SELECT x, x, ${t.maxInFlight ?? 10}, ${t.weight ?? 1}, 'whsec_' || encode(decode(md5(random()::text) || md5(random()::text), 'hex'), 'base64'), 10000000
      FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) AS x`);
  await db.execute(sql`
    INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, next_fire_at, max_attempts, initial_delay_ms, max_delay_ms, status)
    SELECT 'job_' || x, x, 'bench', ${type}, '0 0 1 1 *', 'UTC', '2999-01-01T00:00:00Z', 3, 10, 1000, 'active'
      FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) AS x`);
  return ids;
}

export async function setPool(db: Db, type: string, concurrency: number, timeoutMs = 30_000): Promise<void> {
  await db.execute(sql`
    INSERT INTO pools (type, concurrency, timeout_ms, lease_ms) VALUES (${type}, ${concurrency}, ${timeoutMs}, 60000)
    ON CONFLICT (type) DO UPDATE SET concurrency = excluded.concurrency, timeout_ms = excluded.timeout_ms`);
}

/** `perTenant` triggers due by `at` for each tenant: fires of the tenant's seeded cron job. They are
 *  scheduled triggers, as every cron fire and one-time job's trigger is (a manual run is the
 *  exception), so each write pays what a real trigger's does; one scheduled trigger per (job,
 *  instant), so they are a microsecond apart, the last at `at`. Ids ascend in creation order, like
 *  the ULIDs Fairway issues (random ids would scatter every index insert and lookup over the whole
 *  primary key, which Fairway's own ids never do). */
let seedBatch = 0;

export async function seedTriggers(
  db: Db,
  tenants: string[],
  perTenant: number,
  type: string,
  at = new Date(Date.now() - 1000),
) {
  for (let i = 0; i < tenants.length; i += 200) {
    const chunk = tenants.slice(i, i + 200);
    const prefix = `trg_${Date.now().toString(36).padStart(10, "0")}${String(seedBatch++).padStart(6, "0")}`;
    await db.execute(sql`
      INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts)
      SELECT ${prefix} || lpad((row_number() OVER ())::text, 9, '0'), x, 'job_' || x, ${type}, 'scheduled', d, d, 3
        FROM jsonb_array_elements_text(${JSON.stringify(chunk)}::jsonb) AS x, generate_series(1, ${perTenant}) AS g,
             LATERAL (SELECT ${at.toISOString()}::timestamptz - (${perTenant}::int - g) * interval '1 microsecond' AS d) i`);
  }
}

/** Spreads every pending trigger of each tenant over `perTenant` fairness keys (k0, k1, …): the
 *  queue's triggers move them into their keys' counts, as a PATCH of a job's key would. */
export async function keyTriggers(db: Db, perTenant: number): Promise<void> {
  await db.execute(sql`
    UPDATE triggers SET key = 'k' || (abs(hashtext(id)) % ${Math.max(1, Math.round(perTenant))}::int)
     WHERE status = 'pending'`);
}

export async function countStatus(db: Db, status: string): Promise<number> {
  const rows = (await db.execute(sql`SELECT count(*)::int AS n FROM triggers WHERE status = ${status}`)) as unknown;
  const list = Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows;
  return (list[0] as { n: number }).n;
}

/** Poll until `done()` is true; throws after `timeoutMs` so a stuck run fails loudly. */
export async function waitUntil(
  done: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  everyMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
