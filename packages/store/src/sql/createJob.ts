// Enqueue (POST /v1/jobs): the job, its pool row and — for a one-time job — its trigger, and the maxJobs
// count, in ONE prepared statement (atomic on its own, so no BEGIN/COMMIT). It was a transaction of
// five unprepared round trips, and parsing, planning and round trips were most of a create (BENCH.md api).
//
// maxJobs: the tenant's counter row is incremented last, so creations for one tenant queue on its row
// lock only from the increment to the commit. The increment checks the limit against the row's latest
// value (an UPDATE re-reads a row a concurrent create changed); at the limit it sets NULL, which the
// NOT NULL column refuses: the error aborts the statement, so the job and trigger are never written.
// The row is made on a tenant's first job from a real count (concurrent first creates meet in ON
// CONFLICT, which sees the committed row and increments it under the same check).
// Idempotency-Key: the unique (tenant, key) index; a duplicate inserts nothing (ON CONFLICT waits for a
// concurrent first to commit) and counts nothing, and the first's job is then read by a new statement
// (whose snapshot sees it; this statement's does not).
import { and, eq, sql } from "drizzle-orm";
import { newId } from "@fairway/core";
import { query, type Db } from "../db.ts";
import { jobs } from "../schema.ts";
import { rowShape } from "./columns.ts";

export type JobRow = typeof jobs.$inferSelect;
export type NewJob = typeof jobs.$inferInsert & { id: string; tenantId: string };

export type CreateJobResult =
  | { kind: "created"; job: JobRow }
  | { kind: "replayed"; job: JobRow }
  | { kind: "idempotency_conflict" }
  | { kind: "max_jobs"; limit: number };

const jobShape = rowShape<JobRow>(jobs);

const json = (v: unknown) => (v == null ? null : JSON.stringify(v));
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export async function createJob(
  db: Db,
  job: NewJob,
  opts: {
    maxJobs: number;
    idempotencyKey?: string;
    requestHash?: string;
    /** The caller knows the pool row exists (pools are never deleted), so no insert is needed. */
    poolKnown?: boolean;
  },
): Promise<CreateJobResult> {
  const key = opts.idempotencyKey ?? null;
  let rows: Array<Record<string, unknown>>;
  try {
    rows = await query(db, sql`
      WITH job AS (
        INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, run_at, next_fire_at, target, payload,
                          max_attempts, initial_delay_ms, max_delay_ms, timeout_ms, priority, overlap, misfire,
                          catchup_window_ms, status, idempotency_key, idempotency_hash)
        VALUES (${job.id}, ${job.tenantId}, ${job.name}, ${job.type}, ${job.cron ?? null}, ${job.timezone ?? null},
                ${iso(job.runAt)}::timestamptz, ${iso(job.nextFireAt)}::timestamptz,
                ${json(job.target)}::jsonb, ${json(job.payload)}::jsonb,
                ${job.maxAttempts}::int, ${job.initialDelayMs}::int, ${job.maxDelayMs}::int, ${job.timeoutMs ?? null}::int,
                ${job.priority ?? 0}::int, ${job.overlap ?? "allow"}, ${job.misfire ?? "fire_once"},
                ${job.catchupWindowMs ?? 86_400_000}::int, ${job.status ?? "active"}, ${key}::text, ${opts.requestHash ?? null}::text)
        ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
        RETURNING ${jobShape.list}
      ), trigger AS (
        INSERT INTO triggers (id, tenant_id, job_id, type, scheduled_for, next_attempt_at, priority, exclusive, max_attempts)
        SELECT ${job.runAt ? newId("trg") : null}::text, "tenantId", id, type, "runAt", "runAt", priority, overlap <> 'allow', "maxAttempts"
          FROM job WHERE "runAt" IS NOT NULL
        RETURNING 1
      ), pool AS (
        INSERT INTO pools (type) SELECT ${job.type} WHERE ${!opts.poolKnown}::boolean ON CONFLICT DO NOTHING
      ), counted AS (
        -- After the trigger insert (the join), so the row lock is taken as late as possible.
        UPDATE tenant_counters c SET live_jobs = CASE WHEN c.live_jobs < ${opts.maxJobs}::int THEN c.live_jobs + 1 END
          FROM job LEFT JOIN (SELECT count(*) FROM trigger) t ON true
         WHERE c.tenant_id = ${job.tenantId}
        RETURNING 1
      ), first AS (
        -- The tenant's first job: no counter row in this statement's snapshot. A concurrent first create
        -- may have committed one since; the conflict then increments that row, which it sees.
        INSERT INTO tenant_counters AS c (tenant_id, live_jobs)
        SELECT job."tenantId", CASE WHEN n.live < ${opts.maxJobs}::int THEN n.live + 1 END
          FROM job, LATERAL (
            SELECT count(*)::int AS live FROM jobs WHERE tenant_id = ${job.tenantId} AND status IN ('active', 'paused')
          ) n
         WHERE NOT EXISTS (SELECT 1 FROM counted)
        ON CONFLICT (tenant_id) DO UPDATE
          SET live_jobs = CASE WHEN c.live_jobs < ${opts.maxJobs}::int THEN c.live_jobs + 1 END
        RETURNING 1
      )
      SELECT job.* FROM job LEFT JOIN (SELECT count(*) FROM first) n ON true`);
  } catch (err) {
    if (isCounterAtLimit(err)) return { kind: "max_jobs", limit: opts.maxJobs };
    throw err;
  }
  if (rows.length > 0) return { kind: "created", job: jobShape.rows(rows)[0] };
  if (key === null) throw new Error("createJob: the job was not inserted");
  // Nothing inserted: the key is taken. ON CONFLICT waited for its job to commit, so a new statement sees it.
  const existing = await jobByIdempotencyKey(db, job.tenantId, key);
  if (!existing) throw new Error("createJob: the Idempotency-Key's job was not found");
  return existing.idempotencyHash === opts.requestHash ? { kind: "replayed", job: existing } : { kind: "idempotency_conflict" };
}

/** The NOT NULL violation the counter's limit check raises (postgres.js and PGlite name the column
 *  differently). */
function isCounterAtLimit(err: unknown): boolean {
  const e = err as { code?: string; column_name?: string; column?: string } | null;
  return e?.code === "23502" && (e.column_name ?? e.column) === "live_jobs";
}

async function jobByIdempotencyKey(db: Db, tenantId: string, key: string): Promise<JobRow | null> {
  const [row] = await db.select().from(jobs).where(and(eq(jobs.tenantId, tenantId), eq(jobs.idempotencyKey, key)));
  return row ?? null;
}
