// Enqueue (POST /v1/jobs): the job, its pool row and — for a one-time job — its trigger, and the maxJobs
// count, in ONE prepared statement (atomic on its own, so no BEGIN/COMMIT). It was a transaction of
// five unprepared round trips, and parsing, planning and round trips were most of a create (BENCH.md api).
//
// Creates for one tenant are batched per process: while a tenant's statement is in flight, its next
// creates wait and then go together as one statement (N jobs, the counter incremented once by N). One
// tenant's creates all queue on its counter row's lock anyway; a batch takes that lock once for many
// jobs instead of handing it from backend to backend per job (that hand-off, not the work, capped a
// tenant's create rate). An idle tenant's create goes at once, alone. A batch that fails for any reason —
// the maxJobs limit included — is retried job by job, so each request gets exactly its own outcome.
//
// maxJobs: the counter row is incremented last, so its lock is held only from the increment to the
// commit. The increment checks the limit against the row's latest value (an UPDATE re-reads a row a
// concurrent create changed); over the limit it sets NULL, which the NOT NULL column refuses: the error
// aborts the statement, so no job or trigger of it is written. The row is made on a tenant's first job
// from a real count (concurrent first creates meet in ON CONFLICT, which sees the committed row).
// Idempotency-Key: the unique (tenant, key) index; a duplicate inserts nothing (ON CONFLICT waits for a
// concurrent first to commit) and counts nothing, and the first's job is then read by a new statement
// (whose snapshot sees it; this statement's does not). Two requests with one key in one batch: the first
// inserts, the second is a duplicate of it.
import { and, eq, inArray, sql } from "drizzle-orm";
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

export interface CreateJobOptions {
  maxJobs: number;
  idempotencyKey?: string;
  requestHash?: string;
  /** The caller knows the pool row exists (pools are never deleted), so no insert is needed. */
  poolKnown?: boolean;
}

const jobShape = rowShape<JobRow>(jobs);

/** At most this many jobs, or about this many bytes of job JSON, go in one statement. */
const MAX_BATCH = 100;
const MAX_BATCH_BYTES = 1 << 20;

interface Waiting {
  job: NewJob;
  opts: CreateJobOptions;
  resolve(r: CreateJobResult): void;
  reject(err: unknown): void;
}

/** Per database handle, per tenant and limit: the creates waiting for the tenant's statement in flight. */
const queues = new WeakMap<Db, Map<string, Waiting[]>>();

export function createJob(db: Db, job: NewJob, opts: CreateJobOptions): Promise<CreateJobResult> {
  return new Promise((resolve, reject) => {
    let byTenant = queues.get(db);
    if (!byTenant) queues.set(db, (byTenant = new Map()));
    const key = `${job.tenantId}\u0000${opts.maxJobs}`;
    const waiting = byTenant.get(key);
    if (waiting) return void waiting.push({ job, opts, resolve, reject }); // the drain below takes it
    const queue: Waiting[] = [{ job, opts, resolve, reject }];
    byTenant.set(key, queue);
    void drain(db, byTenant, key, queue);
  });
}

async function drain(db: Db, byTenant: Map<string, Waiting[]>, key: string, queue: Waiting[]): Promise<void> {
  let batch: Waiting[] = [];
  try {
    while (queue.length > 0) {
      batch = takeBatch(queue);
      if (batch.length > 1) {
        try {
          const results = await insertJobs(db, batch);
          batch.forEach((w, i) => (results[i] ? w.resolve(results[i]) : w.reject(noOutcome())));
          continue;
        } catch {
          // The limit, or one bad job: each alone below, so each gets its own outcome.
        }
      }
      for (const w of batch) await createAlone(db, w);
    }
  } catch (err) {
    // Only a bug gets here; the creates still waiting must fail, never hang.
    // (Rejecting a create already answered changes nothing.)
    for (const w of [...batch, ...queue.splice(0)]) w.reject(err);
  } finally {
    byTenant.delete(key);
  }
}

async function createAlone(db: Db, w: Waiting): Promise<void> {
  try {
    const [r] = await insertJobs(db, [w]);
    if (r) w.resolve(r);
    else w.reject(noOutcome());
  } catch (err) {
    if (isCounterAtLimit(err)) w.resolve({ kind: "max_jobs", limit: w.opts.maxJobs });
    else w.reject(err);
  }
}

/** Not inserted, and no job holds its Idempotency-Key (its tenant was deleted in between). */
const noOutcome = () => new Error("createJob: the job was neither created nor found under its Idempotency-Key");

function takeBatch(queue: Waiting[]): Waiting[] {
  let n = 0;
  let bytes = 0;
  while (n < queue.length && n < MAX_BATCH && (n === 0 || bytes < MAX_BATCH_BYTES)) {
    const j = queue[n].job;
    bytes += JSON.stringify(j.payload ?? null).length + JSON.stringify(j.target ?? null).length + 500;
    n++;
  }
  return queue.splice(0, n);
}

/** One statement for jobs of one tenant under one limit; the outcome of each (undefined: none found). */
async function insertJobs(db: Db, batch: Waiting[]): Promise<Array<CreateJobResult | undefined>> {
  const { tenantId } = batch[0].job;
  const { maxJobs } = batch[0].opts;
  const input = batch.map(({ job, opts }) => ({
    id: job.id,
    name: job.name,
    type: job.type,
    cron: job.cron ?? null,
    timezone: job.timezone ?? null,
    run_at: job.runAt ?? null,
    next_fire_at: job.nextFireAt ?? null,
    target: job.target ?? null,
    payload: job.payload ?? null,
    max_attempts: job.maxAttempts,
    initial_delay_ms: job.initialDelayMs,
    max_delay_ms: job.maxDelayMs,
    timeout_ms: job.timeoutMs ?? null,
    priority: job.priority ?? 0,
    overlap: job.overlap ?? "allow",
    misfire: job.misfire ?? "fire_once",
    catchup_window_ms: job.catchupWindowMs ?? 86_400_000,
    status: job.status ?? "active",
    idempotency_key: opts.idempotencyKey ?? null,
    idempotency_hash: opts.requestHash ?? null,
    trigger_id: job.runAt ? newId("trg") : null,
    new_pool: !opts.poolKnown,
  }));
  const rows = await query(db, sql`
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(input)}::jsonb) AS x(
        id text, name text, type text, cron text, timezone text, run_at timestamptz, next_fire_at timestamptz,
        target jsonb, payload jsonb, max_attempts int, initial_delay_ms int, max_delay_ms int, timeout_ms int,
        priority int, overlap text, misfire text, catchup_window_ms int, status text, idempotency_key text,
        idempotency_hash text, trigger_id text, new_pool boolean)
    ), job AS (
      INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, run_at, next_fire_at, target, payload,
                        max_attempts, initial_delay_ms, max_delay_ms, timeout_ms, priority, overlap, misfire,
                        catchup_window_ms, status, idempotency_key, idempotency_hash)
      SELECT id, ${tenantId}, name, type, cron, timezone, run_at, next_fire_at, target, payload,
             max_attempts, initial_delay_ms, max_delay_ms, timeout_ms, priority, overlap, misfire,
             catchup_window_ms, status, idempotency_key, idempotency_hash
        FROM input
      ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
      RETURNING ${jobShape.list}
    ), trigger AS (
      INSERT INTO triggers (id, tenant_id, job_id, type, scheduled_for, next_attempt_at, priority, exclusive, max_attempts)
      SELECT x.trigger_id, j."tenantId", j.id, j.type, j."runAt", j."runAt", j.priority, j.overlap <> 'allow', j."maxAttempts"
        FROM job j JOIN input x ON x.id = j.id
       WHERE j."runAt" IS NOT NULL
      RETURNING 1
    ), pool AS (
      INSERT INTO pools (type) SELECT DISTINCT type FROM input WHERE new_pool ON CONFLICT DO NOTHING
    ), added AS (
      -- Joined with the trigger insert so that runs first and the counter's lock is taken as late as possible.
      SELECT (SELECT count(*)::int FROM job) AS n FROM (SELECT count(*) FROM trigger) t
    ), counted AS (
      UPDATE tenant_counters c SET live_jobs = CASE WHEN c.live_jobs + a.n <= ${maxJobs}::int THEN c.live_jobs + a.n END
        FROM added a
       WHERE c.tenant_id = ${tenantId} AND a.n > 0
      RETURNING 1
    ), first AS (
      -- The tenant's first jobs: no counter row in this statement's snapshot. A concurrent first create
      -- may have committed one since; the conflict then increments that row, which it sees.
      INSERT INTO tenant_counters AS c (tenant_id, live_jobs)
      SELECT ${tenantId}, CASE WHEN l.live + a.n <= ${maxJobs}::int THEN l.live + a.n END
        FROM added a, LATERAL (
          SELECT count(*)::int AS live FROM jobs WHERE tenant_id = ${tenantId} AND status IN ('active', 'paused')
        ) l
       WHERE a.n > 0 AND NOT EXISTS (SELECT 1 FROM counted)
      ON CONFLICT (tenant_id) DO UPDATE
        SET live_jobs = CASE WHEN c.live_jobs + (SELECT n FROM added) <= ${maxJobs}::int THEN c.live_jobs + (SELECT n FROM added) END
      RETURNING 1
    )
    SELECT job.* FROM job LEFT JOIN (SELECT count(*) FROM first) f ON true`);
  const created = new Map(jobShape.rows(rows).map((r) => [r.id, r]));
  const keys = batch.filter((w) => !created.has(w.job.id) && w.opts.idempotencyKey).map((w) => w.opts.idempotencyKey!);
  // Not inserted: the key is taken. ON CONFLICT waited for its job to commit, so a new statement sees it.
  const byKey = new Map((keys.length ? await jobsByIdempotencyKey(db, tenantId, keys) : []).map((r) => [r.idempotencyKey, r]));
  return batch.map(({ job, opts }): CreateJobResult | undefined => {
    const row = created.get(job.id);
    if (row) return { kind: "created", job: row };
    const existing = opts.idempotencyKey ? byKey.get(opts.idempotencyKey) : undefined;
    if (!existing) return undefined;
    return existing.idempotencyHash === opts.requestHash ? { kind: "replayed", job: existing } : { kind: "idempotency_conflict" };
  });
}

async function jobsByIdempotencyKey(db: Db, tenantId: string, keys: string[]): Promise<JobRow[]> {
  return db.select().from(jobs).where(and(eq(jobs.tenantId, tenantId), inArray(jobs.idempotencyKey, [...new Set(keys)])));
}

/** The NOT NULL violation the counter's limit check raises (postgres.js and PGlite name the column
 *  differently). */
function isCounterAtLimit(err: unknown): boolean {
  const e = err as { code?: string; column_name?: string; column?: string } | null;
  return e?.code === "23502" && (e.column_name ?? e.column) === "live_jobs";
}
