// Reads behind the dashboard (packages/dashboard). Each one is bounded: driven by an index and ended by
// a LIMIT, or counting at most COUNT_CAP rows, so a page stays fast with many jobs and a deep backlog.
// The activity figures (worker time, fire lag, throughput) come from triggers created in the window,
// found through the primary key: trigger ids are `trg_` + a ULID, so they sort by creation time. An
// index on started_at or finished_at would make every claim and settle a non-HOT update (schema.ts).
import { sql } from "drizzle-orm";
import { ulid } from "@fairway/core";
import { jsonColumn, query, withDates, type Db } from "../db.ts";
import { poolCounts } from "./cluster-reads.ts";
import { HANDLER_STALE_MS } from "./handler-pools.ts";

/** Counts above this show as "COUNT_CAP+": a count never reads more rows than this. */
export const COUNT_CAP = 10_000;

/** The most triggers an activity read looks at (the newest in its window). */
const ACTIVITY_SCAN_LIMIT = 20_000;

export interface TenantOverview {
  id: string;
  name: string;
  status: string;
  maxInFlight: number;
  weight: number;
  ratePerSecond: number | null;
  burst: number | null;
  maxJobs: number;
  maxPayloadBytes: number;
  /** The tenant's quota plan (null: none) and the quota values set on it itself (sql/plans.ts). */
  planId: string | null;
  own: Record<string, number>;
  running: number;
  /** Capped at COUNT_CAP. */
  due: number;
  /** Capped at COUNT_CAP. */
  dead: number;
  oldestDueLagMs: number | null;
}

/** A page of tenants with their live figures, in id order. */
export async function tenantOverview(
  db: Db,
  opts: { after: string | null; limit: number; ids?: string[] },
): Promise<TenantOverview[]> {
  if (opts.ids?.length === 0) return [];
  const where = opts.ids
    ? sql`WHERE t.id IN (${sql.join(
        opts.ids.map((id) => sql`${id}`),
        sql`, `,
      )})`
    : opts.after
      ? sql`WHERE t.id > ${opts.after}`
      : sql``;
  // One tenant's figures name it in each subquery: on a Citus cluster the read goes to its shard alone.
  const tenant = opts.ids?.length === 1 ? sql`${opts.ids[0]}` : sql`t.id`;
  const rows = await query<TenantOverview>(
    db,
    sql`
    SELECT t.id, t.name, t.status, t.max_in_flight AS "maxInFlight", t.weight, t.rate_per_second AS "ratePerSecond",
      t.burst, t.max_jobs AS "maxJobs", t.max_payload_bytes AS "maxPayloadBytes", t.plan_id AS "planId", t.own,
      (SELECT coalesce(sum(r.running), 0)::int FROM tenant_pools r WHERE r.tenant_id = ${tenant}) AS running,
      (SELECT count(*)::int FROM (SELECT 1 FROM trigger_queue d
          WHERE d.tenant_id = ${tenant} AND d.next_attempt_at <= now() LIMIT ${COUNT_CAP}) d) AS due,
      (SELECT count(*)::int FROM (SELECT 1 FROM dead_letters x WHERE x.tenant_id = ${tenant} LIMIT ${COUNT_CAP}) x) AS dead,
      (SELECT (extract(epoch FROM now() - min(o.next_attempt_at)) * 1000)::int FROM trigger_queue o
        WHERE o.tenant_id = ${tenant} AND o.next_attempt_at <= now()) AS "oldestDueLagMs"
    FROM tenants t ${where}
    ORDER BY t.id
    LIMIT ${opts.limit}`,
  );
  for (const r of rows) r.own = jsonColumn(r.own ?? {});
  return rows;
}

export interface PoolOverview {
  type: string;
  /** Claims of this type stopped (pool-pause.ts). */
  paused: boolean;
  concurrency: number;
  timeoutMs: number;
  maxAttempts: number;
  running: number;
  /** Capped at COUNT_CAP. */
  due: number;
  /** A handler pool (a worker has served it): whether one stamped it lately; null for a webhook pool. */
  served: boolean | null;
}

/** Every pool with a row or with work: its configuration (defaults when it has no row) and figures. */
export async function poolOverview(
  db: Db,
  defaults: { concurrency: number; timeoutMs: number; maxAttempts: number },
): Promise<PoolOverview[]> {
  const c = await poolCounts(db, { dueCap: COUNT_CAP });
  const rows = await query<PoolOverview>(
    db,
    sql`
    WITH ${c.with} types AS (SELECT type FROM pools UNION SELECT DISTINCT type FROM tenant_pools)
    SELECT ty.type, coalesce(p.paused, false) AS paused,
      coalesce(p.concurrency, ${defaults.concurrency})::int AS concurrency,
      coalesce(p.timeout_ms, ${defaults.timeoutMs})::int AS "timeoutMs",
      coalesce(p.max_attempts, ${defaults.maxAttempts})::int AS "maxAttempts",
      ${c.running} AS running, ${c.due} AS due,
      CASE WHEN p.handler_seen_at IS NULL THEN NULL
           ELSE p.handler_seen_at > now() - make_interval(secs => ${HANDLER_STALE_MS / 1000}) END AS served
    FROM types ty LEFT JOIN pools p ON p.type = ty.type ${c.join}
    ORDER BY ty.type
    LIMIT 200`,
  );
  return rows;
}

export interface DeadLetterCount {
  type: string;
  tenantId: string;
  count: number;
}

/** Dead letters by pool type and tenant, over at most COUNT_CAP of them. */
export async function deadLettersByType(db: Db): Promise<{ rows: DeadLetterCount[]; capped: boolean }> {
  const rows = await query<DeadLetterCount & { total: number }>(
    db,
    sql`
    WITH d AS (SELECT x.tenant_id, x.trigger_id FROM dead_letters x LIMIT ${COUNT_CAP})
    SELECT t.type, d.tenant_id AS "tenantId", count(*)::int AS count, (SELECT count(*)::int FROM d) AS total
      FROM d JOIN triggers t ON t.tenant_id = d.tenant_id AND t.id = d.trigger_id
     GROUP BY t.type, d.tenant_id
     ORDER BY count(*) DESC, t.type, d.tenant_id
     LIMIT 200`,
  );
  return { rows: rows.map(({ total: _t, ...r }) => r), capped: (rows[0]?.total ?? 0) >= COUNT_CAP };
}

export interface DeadLetterSummary {
  id: string;
  tenantId: string;
  jobId: string;
  jobName: string;
  type: string;
  attemptCount: number;
  reason: string | null;
  finishedAt: Date | null;
}

/** Dead letters across tenants (or of one tenant): by tenant, and within a tenant newest first (trigger
 *  ids are time-ordered), along the dead_letters key walked backwards per tenant. */
export async function listDeadLetterSummaries(
  db: Db,
  opts: { tenantId?: string; after: { tenantId: string; triggerId: string } | null; limit: number },
): Promise<DeadLetterSummary[]> {
  const conds = [sql`t.status = 'dead'`];
  // The tenant on each table: one tenant's page reads its shard alone on a Citus cluster.
  if (opts.tenantId) {
    conds.push(
      sql`d.tenant_id = ${opts.tenantId} AND t.tenant_id = ${opts.tenantId} AND j.tenant_id = ${opts.tenantId}`,
    );
  }
  if (opts.after) {
    conds.push(
      sql`(d.tenant_id > ${opts.after.tenantId} OR (d.tenant_id = ${opts.after.tenantId} AND d.trigger_id < ${opts.after.triggerId}))`,
    );
  }
  const rows = await query<DeadLetterSummary>(
    db,
    sql`
    SELECT t.id, d.tenant_id AS "tenantId", t.job_id AS "jobId", j.name AS "jobName", t.type,
           t.attempt_count AS "attemptCount", t.reason, t.finished_at AS "finishedAt"
      FROM dead_letters d
      JOIN triggers t ON t.tenant_id = d.tenant_id AND t.id = d.trigger_id
      JOIN jobs j ON j.tenant_id = d.tenant_id AND j.id = t.job_id
     WHERE ${sql.join(conds, sql` AND `)}
     ORDER BY d.tenant_id, d.trigger_id DESC
     LIMIT ${opts.limit}`,
  );
  return withDates(rows, "finishedAt");
}

export type JobStatusFilter = "active" | "paused" | "completed" | "failed" | "cancelled";

/** A tenant's jobs in id order, filtered by status and by a name fragment (case-insensitive). Driven by
 *  jobs_tenant_idx (tenant, id); the filters are applied while walking it, so LIMIT ends the scan. */
export async function searchJobs(
  db: Db,
  tenantId: string,
  opts: {
    q?: string;
    status?: JobStatusFilter;
    failing?: boolean;
    /** Jobs with every one of these tags (jobs_tags_idx). */
    tags?: Record<string, string>;
    after: string | null;
    limit: number;
  },
) {
  // Not the tenant's notifications job (status system, notifications.ts).
  const conds = [sql`tenant_id = ${tenantId}`, sql`status <> 'system'`];
  if (opts.after) conds.push(sql`id > ${opts.after}`);
  if (opts.status) conds.push(sql`status = ${opts.status}`);
  if (opts.failing) conds.push(sql`failure_streak > 0`);
  if (opts.tags) conds.push(sql`tags @> ${JSON.stringify(opts.tags)}::jsonb`);
  if (opts.q) conds.push(sql`(name ILIKE ${`%${escapeLike(opts.q)}%`} OR id = ${opts.q})`);
  const rows = await query<{
    id: string;
    name: string;
    type: string;
    status: string;
    cron: string | null;
    timezone: string | null;
    spreadMs: number | null;
    runAt: Date | null;
    nextFireAt: Date | null;
    failureStreak: number;
    tags: Record<string, string> | null;
    createdAt: Date;
  }>(
    db,
    sql`
    SELECT id, name, type, status, cron, timezone, spread_ms AS "spreadMs", run_at AS "runAt", next_fire_at AS "nextFireAt",
           failure_streak AS "failureStreak", tags, created_at AS "createdAt"
      FROM jobs WHERE ${sql.join(conds, sql` AND `)}
     ORDER BY id
     LIMIT ${opts.limit}`,
  );
  return withDates(rows, "runAt", "nextFireAt", "createdAt");
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Above every trigger id: "`" follows "_" in byte order. */
const TRIGGER_ID_END = "trg`";

export interface ActivityWindow {
  /** By tenant over the window: worker milliseconds, attempts, failed ones, and retries (attempt > 1). */
  workerMs: Array<{ tenantId: string; ms: number; attempts: number; failures: number; retries: number }>;
  /** Per minute bucket (epoch ms of its start): attempts, failures, and fire lag of first attempts. */
  minutes: Array<{
    minute: number;
    attempts: number;
    failures: number;
    lagP50Ms: number | null;
    lagMaxMs: number | null;
  }>;
  /** True when the window held more than ACTIVITY_SCAN_LIMIT triggers (only the newest were read). */
  truncated: boolean;
}

/** Attempt activity over the last `windowMs`: of triggers created in it (see the file's head), every
 *  attempt that started in it. Optionally one tenant's. */
export async function activityWindow(
  db: Db,
  opts: { windowMs: number; nowMs: number; tenantId?: string },
): Promise<ActivityWindow> {
  const since = new Date(opts.nowMs - opts.windowMs);
  // A ULID of that instant with the lowest random part: every id created since sorts at or above it.
  const lowId = `trg_${ulid(since.getTime()).slice(0, 10)}0000000000000000`;
  const tenant = opts.tenantId ? sql`AND tenant_id = ${opts.tenantId}` : sql``;
  // One tenant's read names it on each table: on a Citus cluster it goes to its shard alone.
  const logTenant = opts.tenantId ? sql`AND l.tenant_id = ${opts.tenantId}` : sql``;
  const rows = await query<{
    tenantId: string | null;
    minute: string | number | null;
    attempts: number;
    failures: number;
    retries: number;
    workerMs: number;
    lagP50Ms: number | null;
    lagMaxMs: number | null;
    scanned: number;
  }>(
    db,
    sql`
    WITH recent AS (
      SELECT id, tenant_id, kind, scheduled_for, ok_started_at, ok_duration_ms
        FROM triggers WHERE id >= ${lowId} AND id < ${TRIGGER_ID_END} ${tenant}
       ORDER BY id DESC LIMIT ${ACTIVITY_SCAN_LIMIT}
    ), a AS (
      SELECT r.tenant_id, r.ok_started_at AS started_at, r.ok_duration_ms AS duration_ms, true AS ok, 1 AS attempt,
             CASE WHEN r.kind = 'scheduled' THEN r.ok_started_at - r.scheduled_for END AS lag
        FROM recent r WHERE r.ok_started_at IS NOT NULL
      UNION ALL
      SELECT r.tenant_id, l.started_at, l.duration_ms, l.outcome = 'success', l.attempt,
             CASE WHEN r.kind = 'scheduled' AND l.attempt = 1 THEN l.started_at - r.scheduled_for END
        FROM recent r JOIN attempt_log l ON l.tenant_id = r.tenant_id AND l.trigger_id = r.id ${logTenant}
    ), w AS (SELECT * FROM a WHERE started_at >= ${since.toISOString()}::timestamptz)
    SELECT tenant_id AS "tenantId", NULL AS minute, count(*)::int AS attempts, count(*) FILTER (WHERE NOT ok)::int AS failures,
           count(*) FILTER (WHERE attempt > 1)::int AS retries,
           coalesce(sum(duration_ms), 0)::float8 AS "workerMs", NULL::float8 AS "lagP50Ms", NULL::float8 AS "lagMaxMs",
           (SELECT count(*)::int FROM recent) AS scanned
      FROM w GROUP BY tenant_id
    UNION ALL
    SELECT NULL, (extract(epoch FROM date_trunc('minute', started_at)) * 1000)::float8, count(*)::int,
           count(*) FILTER (WHERE NOT ok)::int, 0, 0,
           (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM lag) * 1000))::float8,
           (max(extract(epoch FROM lag)) * 1000)::float8,
           0
      FROM w GROUP BY date_trunc('minute', started_at)`,
  );
  const workerMs = rows
    .filter((r) => r.tenantId !== null)
    .map((r) => ({
      tenantId: r.tenantId!,
      ms: Number(r.workerMs),
      attempts: r.attempts,
      failures: r.failures,
      retries: r.retries,
    }))
    .sort((x, y) => y.ms - x.ms);
  const minutes = rows
    .filter((r) => r.tenantId === null)
    .map((r) => ({
      minute: Number(r.minute),
      attempts: r.attempts,
      failures: r.failures,
      lagP50Ms: r.lagP50Ms == null ? null : Math.max(0, Number(r.lagP50Ms)),
      lagMaxMs: r.lagMaxMs == null ? null : Math.max(0, Number(r.lagMaxMs)),
    }))
    .sort((x, y) => x.minute - y.minute);
  const scanned = rows.find((r) => r.tenantId !== null)?.scanned ?? 0;
  return { workerMs, minutes, truncated: scanned >= ACTIVITY_SCAN_LIMIT };
}

export interface SecretName {
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A page of a tenant's secret names, in name order (the secrets key). Never a value, sealed or not. */
export async function secretNamesPage(
  db: Db,
  tenantId: string,
  opts: { after: string | null; limit: number },
): Promise<SecretName[]> {
  const after = opts.after === null ? sql`` : sql`AND name > ${opts.after}`;
  const rows = await query<SecretName>(
    db,
    sql`
    SELECT name, created_at AS "createdAt", updated_at AS "updatedAt"
      FROM secrets WHERE tenant_id = ${tenantId} ${after}
     ORDER BY name
     LIMIT ${opts.limit}`,
  );
  return withDates(rows, "createdAt", "updatedAt");
}
