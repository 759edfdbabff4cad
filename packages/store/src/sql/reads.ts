// Read-only queries behind the API. Every tenant read filters by tenant: another tenant's id is
// simply not found.
import type { JobStatus } from "@fairway/core";
import { and, asc, desc, eq, getTableColumns, gt, lt, ne, notInArray, sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { attemptLog, attempts, deadLetters, jobs, triggers } from "../schema.ts";

/** What the trigger reads select: every column but the ok_* ones, the first attempt kept in the row
 *  when it succeeded (with its response body), which the attempts view reads. A page of triggers need
 *  not carry a hundred response bodies. Nor a re-run's override, which only the executor reads (it
 *  may be as large as a payload). */
const { okStartedAt, okDurationMs, okHttpStatus, okResponseBody, override, ...triggerFields } =
  getTableColumns(triggers);
export type AttemptRow = typeof attempts.$inferSelect;

export async function getJob(db: Db, tenantId: string, jobId: string) {
  const [row] = await db
    .select()
    .from(jobs)
    // Not the tenant's notifications job (status system): Fairway's own, no route reads or changes it.
    .where(and(eq(jobs.id, jobId), eq(jobs.tenantId, tenantId), ne(jobs.status, "system")));
  return row ?? null;
}

export interface JobFilter {
  after: string | null;
  limit: number;
  /** One status; when absent, every status but cancelled (a cancelled job is history, not work). */
  status?: JobStatus;
  type?: string;
  name?: string;
  /** One fairness key (jobs_key_idx). */
  key?: string;
  /** Every one of these tags (jobs_tags_idx: containment). */
  tags?: Record<string, string>;
  /** Only jobs whose latest fires ended dead (failure_streak > 0), or only those that are not. */
  failing?: boolean;
}

export async function listJobs(db: Db, tenantId: string, f: JobFilter) {
  return db
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.tenantId, tenantId),
        // The tenant's notifications job (status system) is no job of theirs to list.
        f.status ? eq(jobs.status, f.status) : notInArray(jobs.status, ["cancelled", "system"]),
        f.type ? eq(jobs.type, f.type) : undefined,
        f.name ? eq(jobs.name, f.name) : undefined,
        f.key !== undefined ? eq(jobs.key, f.key) : undefined,
        f.tags ? sql`${jobs.tags} @> ${JSON.stringify(f.tags)}::jsonb` : undefined,
        f.failing === undefined ? undefined : f.failing ? gt(jobs.failureStreak, 0) : eq(jobs.failureStreak, 0),
        f.after ? gt(jobs.id, f.after) : undefined,
      ),
    )
    .orderBy(asc(jobs.id))
    .limit(f.limit);
}

/** A trigger as the reads below return it (the columns in triggerFields). */
export type TriggerRow = Awaited<ReturnType<typeof listTriggers>>[number];

/** A job's triggers, newest first; with `key`, only those carrying that fairness key. */
export async function listTriggers(
  db: Db,
  tenantId: string,
  jobId: string,
  before: string | null,
  limit: number,
  filter: { key?: string } = {},
) {
  return db
    .select(triggerFields)
    .from(triggers)
    .where(
      and(
        eq(triggers.jobId, jobId),
        eq(triggers.tenantId, tenantId),
        before ? lt(triggers.id, before) : undefined,
        filter.key !== undefined ? eq(triggers.key, filter.key) : undefined,
      ),
    )
    .orderBy(desc(triggers.id))
    .limit(limit);
}

export async function getTrigger(db: Db, tenantId: string, id: string) {
  const [row] = await db
    .select(triggerFields)
    .from(triggers)
    .where(and(eq(triggers.id, id), eq(triggers.tenantId, tenantId)));
  if (!row) return null;
  const list = await db
    .select()
    .from(attempts)
    .where(and(eq(attempts.triggerId, id), eq(attempts.tenantId, tenantId)))
    .orderBy(asc(attempts.attempt));
  return { ...row, attempts: list };
}

export async function listDeadLetters(
  db: Db,
  tenantId: string,
  opts: { jobId?: string; after: string | null; limit: number },
) {
  // Through dead_letters (schema.ts), newest first: its key (tenant, trigger id) walked backwards, trigger
  // ids being time-ordered; `after` is the last id of the previous page. Each row carries what a
  // user needs to decide on a replay without more requests: the job's name and type, and the last
  // attempt's outcome, HTTP status and error.
  const last = db
    .select({ outcome: attemptLog.outcome, httpStatus: attemptLog.httpStatus, error: attemptLog.error })
    .from(attemptLog)
    .where(and(eq(attemptLog.triggerId, triggers.id), eq(attemptLog.tenantId, tenantId)))
    .orderBy(desc(attemptLog.attempt))
    .limit(1)
    .as("last");
  return (
    db
      .select({
        ...triggerFields,
        jobName: jobs.name,
        jobType: jobs.type,
        lastOutcome: last.outcome,
        lastHttpStatus: last.httpStatus,
        lastError: last.error,
      })
      .from(deadLetters)
      // Every table named with the tenant: on a Citus cluster the whole read goes to its shard.
      .innerJoin(triggers, and(eq(triggers.tenantId, deadLetters.tenantId), eq(triggers.id, deadLetters.triggerId)))
      .innerJoin(jobs, and(eq(jobs.tenantId, tenantId), eq(jobs.id, triggers.jobId)))
      .leftJoinLateral(last, sql`true`)
      .where(
        and(
          eq(deadLetters.tenantId, tenantId),
          eq(triggers.tenantId, tenantId),
          eq(triggers.status, "dead"),
          opts.jobId ? eq(triggers.jobId, opts.jobId) : undefined,
          opts.after ? lt(deadLetters.triggerId, opts.after) : undefined,
        ),
      )
      .orderBy(desc(deadLetters.triggerId))
      .limit(opts.limit)
  );
}

export interface TenantUsage {
  running: number;
  due: number;
  pending: number;
  jobs: number;
  dead: number;
  oldestDueLagMs: number | null;
}

/** Live usage of one tenant (GET /v1/quota). */
export async function tenantUsage(db: Db, tenantId: string): Promise<TenantUsage> {
  const [row] = await query<TenantUsage>(db, usageSql(sql`WHERE t.id = ${tenantId}`, sql`${tenantId}`));
  return row ?? { running: 0, due: 0, pending: 0, jobs: 0, dead: 0, oldestDueLagMs: null };
}

/** Per-tenant operational figures (GET /v1/admin/stats). */
export async function allTenantUsage(
  db: Db,
): Promise<Array<TenantUsage & { tenantId: string; maxInFlight: number; status: string }>> {
  return query(db, usageSql(sql``, sql`t.id`));
}

// Pending work from the queue, running from the pools' counts, dead letters from theirs (schema.ts): a
// trigger whose lease expired counts as running until it is reaped. `tenant` is the subqueries' tenant:
// `t.id`, or for one tenant its id, so that on a Citus cluster each names it and the read goes to its
// shard alone (Citus prunes by the constant, not through the correlation).
const usageSql = (where: ReturnType<typeof sql>, tenant: ReturnType<typeof sql>) => sql`
  SELECT t.id AS "tenantId", t.max_in_flight AS "maxInFlight", t.status,
    (SELECT coalesce(sum(r.running), 0)::int FROM tenant_pools r WHERE r.tenant_id = ${tenant}) AS running,
    (SELECT count(*)::int FROM trigger_queue d WHERE d.tenant_id = ${tenant} AND d.next_attempt_at <= now()) AS due,
    (SELECT count(*)::int FROM trigger_queue p WHERE p.tenant_id = ${tenant}) AS pending,
    (SELECT count(*)::int FROM jobs j WHERE j.tenant_id = ${tenant} AND j.status IN ('active', 'paused')) AS jobs,
    (SELECT count(*)::int FROM dead_letters x WHERE x.tenant_id = ${tenant}) AS dead,
    (SELECT (extract(epoch FROM now() - min(o.next_attempt_at)) * 1000)::int FROM trigger_queue o
      WHERE o.tenant_id = ${tenant} AND o.next_attempt_at <= now()) AS "oldestDueLagMs"
  FROM tenants t ${where}
  ORDER BY t.id`;
