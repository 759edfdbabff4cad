// Enqueue (POST /v1/jobs): the job, its pool row and — for a one-time job — its trigger, and the maxJobs
// count, in ONE prepared statement (atomic on its own, so no BEGIN/COMMIT): parsing, planning and round
// trips, not the writes, would otherwise be most of a create.
//
// Creates for one tenant are batched per process: while a tenant's statement is in flight, its next
// creates wait and then go together as one statement (N jobs, the counter incremented once). One
// tenant's creates all queue on its counter row's lock anyway; a batch takes that lock once for many
// jobs instead of handing it from backend to backend per job (that hand-off, not the work, capped a
// tenant's create rate). An idle tenant's create goes at once, alone. A statement that fails (one bad
// job) is retried job by job, so each request gets exactly its own outcome.
//
// maxJobs, refused without an error: the statement first locks the tenant's counter row (FOR NO KEY
// UPDATE returns its latest committed value, waiting for a concurrent create, cancel or settle that holds
// it), admits as many of the batch's jobs as the limit leaves room for, in request order, inserts only
// those, and adds the number it inserted to the counter last (the row is already locked, so that UPDATE
// sees the value the admission used). A refused job writes nothing (not even its pool row), and nothing
// fails: no statement aborts, and Postgres logs no ERROR per refusal.
// Lock order: the tenant's row FOR KEY SHARE (what the jobs' foreign keys take anyway, at the end of the
// statement), then its counter row: the order a tenant's delete would take them in (the row, then the
// cascade to its counter). Settle and cancel lock triggers and jobs, then counters; a create waits for no
// existing job or trigger row, so neither waits on it in a cycle.
// The counter row is made on a tenant's first job from a real count, by a statement of its own: the
// create finds no row to lock, admits nothing, makes the row (concurrent firsts meet in ON CONFLICT) and
// goes again.
// Idempotency-Key: the unique (tenant, key) index. A job whose key a committed job in the snapshot or an
// earlier job of its batch holds takes no room, and is answered from the job found by key afterwards, by
// a new statement whose snapshot sees it. A key a concurrent create commits after the snapshot is caught
// by ON CONFLICT DO NOTHING (which waits for that create; the job counts nothing); the room given to it
// then went unused, so the batch's jobs not created go again.
//
// On the distributed layout (docs/scaling.md) the same admission and writes are a transaction of
// statements on the tenant's shard group, one call of a function on its node (shardStatements).
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import { DEFAULT_CATCHUP_WINDOW_MS, newId } from "@fairway/core";
import { jsonColumn, query, type Db } from "../db.ts";
import { readShape } from "../layout/detect.ts";
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
      try {
        const results = await insertJobs(db, batch, await separatePool(db));
        for (const [i, w] of batch.entries()) w.resolve(results[i]);
      } catch (err) {
        if (batch.length === 1) batch[0].reject(err);
        // One bad job: each alone, so each gets its own outcome.
        else
          for (const w of batch)
            await insertJobs(db, [w], await separatePool(db)).then(
              ([r]) => w.resolve(r),
              (e: unknown) => w.reject(e),
            );
      }
    }
  } catch (err) {
    // Only a bug gets here; the creates still waiting must fail, never hang.
    // (Rejecting a create already answered changes nothing.)
    for (const w of [...batch, ...queue.splice(0)]) w.reject(err);
  } finally {
    byTenant.delete(key);
  }
}

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

/** One job, created inside the caller's transaction `tx` (no batching: the caller holds locks the
 *  batch's statement must not wait behind); the same admission and idempotency rules. */
export async function createJobIn(
  tx: Db,
  job: NewJob,
  opts: CreateJobOptions,
  separate: boolean,
): Promise<CreateJobResult> {
  const [result] = await insertJobs(tx, [{ job, opts }], separate);
  return result;
}

export type Pending = Pick<Waiting, "job" | "opts">;

/** POST /v1/jobs/batch: one tenant's jobs under one limit, in one transaction, the outcome of each in
 *  input order, under the rules of a single create: admitted in order while maxJobs leaves room (the
 *  counter row locked by the first statement, so the count is exact against every other create), each
 *  Idempotency-Key answered as a single create's would be (an earlier item's key within the batch
 *  too). The statements take MAX_BATCH jobs each, so no statement grows with the batch; any error
 *  rolls the whole batch back. */
export async function createJobs(db: Db, batch: Pending[]): Promise<CreateJobResult[]> {
  if (batch.length === 0) return [];
  const separate = await separatePool(db);
  return db.transaction(async (tx) => {
    const out: CreateJobResult[] = [];
    for (let i = 0; i < batch.length; i += MAX_BATCH)
      out.push(...(await insertJobs(tx, batch.slice(i, i + MAX_BATCH), separate)));
    return out;
  });
}

/** Whether creates on `db` write a missing pool row by a statement of its own (insertJobs): the
 *  per-tenant layout's create. */
export function separatePool(db: Db): Promise<boolean> {
  return readShape(db, { single: false, perTenant: true });
}

/** Jobs of one tenant under one limit, created by one statement (rarely more, see below); the outcome
 *  of each. `separatePool`: the per-tenant layout's create (insertOnShard). */
export async function insertJobs(db: Db, batch: Pending[], separatePool: boolean): Promise<CreateJobResult[]> {
  const { tenantId } = batch[0].job;
  const { maxJobs } = batch[0].opts;
  const created = new Map<string, JobRow>();
  // On the distributed layout `pools` is a reference table, and a write to one is a transaction on every
  // node: the statement stays on the tenant's shard, and a type without a pool row (rare: pools are
  // never deleted, and the caller says when it knows the row) gets it first, by a statement of its own.
  // A create refused there may leave that row: a pool with the defaults, as its first job would make it.
  if (separatePool) await ensurePools(db, batch);
  // Again, for the jobs not created, after a statement that found no counter row (once per tenant) or
  // left room unused: it gave a slot to a key a concurrent create committed after its snapshot (ON
  // CONFLICT waited for that create), so a job it refused may fit. Each key is committed once: this ends.
  for (let todo = batch, round = 0; todo.length > 0; round++) {
    if (round > batch.length + 1) throw new Error(`createJob: tenant ${tenantId} still has no counter row`);
    if (round > 0) await ensureCounter(db, tenantId);
    const { rows, again } = separatePool
      ? await insertOnShard(db, todo)
      : againRow(jobShape.rows(await query(db, insertStatement(todo))));
    for (const r of rows) created.set(r.id, r);
    if (!again) break;
    todo = todo.filter((w) => !created.has(w.job.id));
  }
  // Not created, with a key: the key is taken (by a committed job, which a new statement sees), or the
  // job was refused.
  const keys = batch.flatMap((w) => (!created.has(w.job.id) && w.opts.idempotencyKey) || []);
  const byKey = new Map(
    (keys.length ? await jobsByIdempotencyKey(db, tenantId, keys) : []).map((r) => [r.idempotencyKey, r]),
  );
  return batch.map(({ job, opts }): CreateJobResult => {
    const row = created.get(job.id);
    if (row) return { kind: "created", job: row };
    const existing = opts.idempotencyKey === undefined ? undefined : byKey.get(opts.idempotencyKey);
    if (!existing) return { kind: "max_jobs", limit: maxJobs }; // no room, and no job holds its key
    return existing.idempotencyHash === opts.requestHash
      ? { kind: "replayed", job: existing }
      : { kind: "idempotency_conflict" };
  });
}

/** The rows the plain statement returned: the created jobs, and whether to go again (a last row of NULLs). */
function againRow(rows: JobRow[]): { rows: JobRow[]; again: boolean } {
  const again = rows.length > 0 && rows[rows.length - 1].id === null;
  return { rows: again ? rows.slice(0, -1) : rows, again };
}

/** The batch as the statements read it (jsonb_to_recordset AS x(INPUT_COLUMNS)). */
function inputRows(batch: Pending[]) {
  const keys = new Set<string>();
  return batch.map(({ job, opts }, ord) => ({
    ord,
    // An earlier job of the batch has its key: this one is its duplicate.
    dup: opts.idempotencyKey !== undefined && keys.size === keys.add(opts.idempotencyKey).size,
    id: job.id,
    name: job.name,
    type: job.type,
    cron: job.cron ?? null,
    timezone: job.timezone ?? null,
    spread_ms: job.spreadMs ?? null,
    run_at: job.runAt ?? null,
    next_fire_at: job.nextFireAt ?? null,
    target: job.target ?? null,
    payload: job.payload ?? null,
    max_attempts: job.maxAttempts,
    initial_delay_ms: job.initialDelayMs,
    max_delay_ms: job.maxDelayMs,
    backoff: job.backoff ?? "exponential",
    jitter: job.jitter ?? "full",
    timeout_ms: job.timeoutMs ?? null,
    priority: job.priority ?? 0,
    overlap: job.overlap ?? "allow",
    misfire: job.misfire ?? "fire_once",
    delivery: job.delivery ?? "at_least_once",
    catchup_window_ms: job.catchupWindowMs ?? DEFAULT_CATCHUP_WINDOW_MS,
    status: job.status ?? "active",
    notify: job.notify ?? null,
    key: job.key ?? null,
    debounce: job.debounce ?? null,
    on_busy: job.onBusy ?? "queue",
    tags: job.tags ?? null,
    traceparent: job.traceparent ?? null,
    tracestate: job.tracestate ?? null,
    idempotency_key: opts.idempotencyKey ?? null,
    idempotency_hash: opts.requestHash ?? null,
    trigger_id: job.runAt ? newId("trg") : null,
    new_pool: !opts.poolKnown,
  }));
}

const INPUT_COLUMNS = sql`
        ord int, dup boolean, id text, name text, type text, cron text, timezone text, spread_ms int, run_at timestamptz,
        next_fire_at timestamptz, target jsonb, payload jsonb, max_attempts int, initial_delay_ms int,
        max_delay_ms int, backoff text, jitter text, timeout_ms int, priority int, overlap text, misfire text, delivery text, catchup_window_ms int,
        status text, notify jsonb, key text, debounce jsonb, on_busy text, tags jsonb, traceparent text, tracestate text, idempotency_key text, idempotency_hash text, trigger_id text, new_pool boolean`;

/** The columns of jobs a create writes from the input, besides id and tenant_id. */
const JOB_FIELDS = [
  "name",
  "type",
  "cron",
  "timezone",
  "spread_ms",
  "run_at",
  "next_fire_at",
  "target",
  "payload",
  "max_attempts",
  "initial_delay_ms",
  "max_delay_ms",
  "backoff",
  "jitter",
  "timeout_ms",
  "priority",
  "overlap",
  "misfire",
  "delivery",
  "catchup_window_ms",
  "status",
  "notify",
  "key",
  "debounce",
  "on_busy",
  "tags",
  "traceparent",
  "tracestate",
  "idempotency_key",
  "idempotency_hash",
];
const JOB_COLUMNS = sql.raw(`id, tenant_id, ${JOB_FIELDS.join(", ")}`);
const jobValues = (alias: string) => sql.raw(JOB_FIELDS.map((c) => `${alias}.${c}`).join(", "));

/** The create on plain PostgreSQL, one statement: the inserted jobs' rows, then a row of NULLs if the
 *  jobs not inserted should go again. */
function insertStatement(batch: Pending[]): SQL {
  const { tenantId } = batch[0].job;
  const { maxJobs } = batch[0].opts;
  return sql`
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(inputRows(batch))}::jsonb) AS x(${INPUT_COLUMNS})
    ), counter AS MATERIALIZED (
      -- First: the tenant's row (KEY SHARE, as the foreign keys take it), then its counter row, locked
      -- at its latest committed value. No row: the tenant's first job (see ensureCounter).
      SELECT c.live_jobs FROM tenant_counters c
       WHERE c.tenant_id = (SELECT t.id FROM tenants t WHERE t.id = ${tenantId} FOR KEY SHARE)
         FOR NO KEY UPDATE
    ), held AS (
      -- The batch's keys that committed jobs hold: one index probe per key (LATERAL … LIMIT: never a
      -- scan of all the tenant's keys, whatever the planner believes of them).
      SELECT x.idempotency_key FROM input x,
             LATERAL (SELECT 1 FROM jobs j WHERE j.tenant_id = ${tenantId} AND j.idempotency_key = x.idempotency_key LIMIT 1) h
       WHERE NOT x.dup AND x.idempotency_key IS NOT NULL
    ), admitted AS (
      -- The first (maxJobs − live) jobs, in request order, of those whose key nobody holds yet (a
      -- committed job, or an earlier job of the batch): a duplicate takes no room.
      SELECT ord FROM (
        SELECT x.ord, count(*) OVER (ORDER BY x.ord) AS nth
          FROM input x
         WHERE NOT x.dup AND (x.idempotency_key IS NULL OR x.idempotency_key NOT IN (SELECT idempotency_key FROM held))
      ) c
       WHERE c.nth <= ${maxJobs}::int - (SELECT live_jobs FROM counter)
    ), job AS (
      INSERT INTO jobs (${JOB_COLUMNS})
      SELECT x.id, ${tenantId}, ${jobValues("x")}
        FROM input x JOIN admitted a ON a.ord = x.ord
      ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
      RETURNING ${jobShape.list}
    ), trigger AS (
      INSERT INTO triggers (id, tenant_id, job_id, type, scheduled_for, next_attempt_at, priority, exclusive, max_attempts, key)
      SELECT x.trigger_id, j."tenantId", j.id, j.type, j."runAt", j."runAt", j.priority, j.overlap <> 'allow', j."maxAttempts", j.key
        FROM job j JOIN input x ON x.id = j.id
       WHERE j."runAt" IS NOT NULL
    ), pool AS (
      INSERT INTO pools (type) SELECT DISTINCT j.type FROM job j JOIN input x ON x.id = j.id WHERE x.new_pool
      ON CONFLICT DO NOTHING
    ), counted AS (
      -- Last, by the jobs really inserted. The row is ours since "counter": this UPDATE, whose snapshot
      -- may hold an older version, follows it to the latest one (READ COMMITTED), the one locked there.
      UPDATE tenant_counters c SET live_jobs = c.live_jobs + a.n
        FROM (SELECT count(*)::int AS n FROM job) a
       WHERE c.tenant_id = ${tenantId} AND a.n > 0
    )
    SELECT j.* FROM job j
    UNION ALL -- Go again: no counter row, or a slot given to a job not inserted (its key was taken).
    SELECT j.* FROM (SELECT WHERE NOT EXISTS (SELECT 1 FROM counter)
                        OR (SELECT count(*) FROM admitted) > (SELECT count(*) FROM job)) again
      LEFT JOIN job j ON false`;
}

/** The create on the distributed layout (docs/scaling.md), where Citus sends a statement with an INSERT in
 *  a CTE, or an INSERT … SELECT from anything but a colocated table, through the coordinator: the same
 *  admission and writes as insertStatement as a transaction of four statements, each on the tenant's
 *  shard group alone, run as one call of the create's function (createCall). The first locks the counter row and
 *  reads it and the batch's held keys; the next three cannot use its rows, so the jobs' insert counts
 *  the room again under that lock (the same value), and the admission is made without a window: each
 *  job carries its rank among the batch's non-duplicates and the keys of those before it, the ones
 *  held taking no room. Inserts read `tenants t` at the tenant for their tenant_id, which Citus pushes
 *  down to the shard (an INSERT … SELECT from a colocated table). */
export function shardStatements(batch: Pending[]): { lock: SQL; jobs: SQL; triggers: SQL; counted: SQL } {
  return shardStatementsOf(createValues(batch));
}

/** What shardStatements() takes from a batch: its tenant, its rows (inputRows, with each one's rank and
 *  the keys before it), the keys it holds, its job ids and the limit. */
export interface CreateValues {
  tenantId: string;
  input: string;
  keys: string;
  ids: string;
  maxJobs: number;
}

function createValues(batch: Pending[]): CreateValues {
  const prior: string[] = [];
  let rank = 0;
  const input = inputRows(batch).map((x) => {
    const row = { ...x, rank: x.dup ? null : ++rank, prior_keys: x.dup ? [] : [...prior] };
    if (!x.dup && x.idempotency_key !== null) prior.push(x.idempotency_key);
    return row;
  });
  return {
    tenantId: batch[0].job.tenantId,
    input: JSON.stringify(input),
    keys: JSON.stringify(prior),
    ids: `{${batch.map((w) => w.job.id).join(",")}}`,
    maxJobs: batch[0].opts.maxJobs,
  };
}

/** shardStatements() of bound values (also the create's function, delegated.ts). */
export function shardStatementsOf(v: CreateValues): { lock: SQL; jobs: SQL; triggers: SQL; counted: SQL } {
  const { tenantId, input, keys, ids, maxJobs } = v;
  return {
    // The tenant's row (KEY SHARE, as the foreign keys take it), then its counter row, locked at its
    // latest committed value; no row: the tenant's first job (see ensureCounter).
    lock: sql`
      SELECT c.live_jobs AS live,
             ARRAY(SELECT h.idempotency_key FROM jobs h
                    WHERE h.tenant_id = ${tenantId} AND h.idempotency_key IN (SELECT jsonb_array_elements_text(${keys}::jsonb))) AS held
        FROM tenant_counters c
       WHERE c.tenant_id = ${tenantId}
         AND c.tenant_id = (SELECT t.id FROM tenants t WHERE t.id = ${tenantId} FOR KEY SHARE)
         FOR NO KEY UPDATE OF c`,
    jobs: sql`
      INSERT INTO jobs (${JOB_COLUMNS})
      SELECT x.id, t.id, ${jobValues("x")}
        FROM tenants t
        CROSS JOIN jsonb_to_recordset(${input}::jsonb) AS x(${INPUT_COLUMNS}, rank int, prior_keys text[])
       WHERE t.id = ${tenantId} AND NOT x.dup
         AND NOT EXISTS (SELECT 1 FROM jobs h WHERE h.tenant_id = ${tenantId} AND h.idempotency_key = x.idempotency_key)
         AND x.rank - (SELECT count(*) FROM jobs h WHERE h.tenant_id = ${tenantId} AND h.idempotency_key = ANY (x.prior_keys))
             <= ${maxJobs}::int - (SELECT c.live_jobs FROM tenant_counters c WHERE c.tenant_id = ${tenantId})
      ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
      RETURNING ${jobShape.list}`,
    // Only the batch's jobs this transaction inserted can have its ids.
    triggers: sql`
      INSERT INTO triggers (id, tenant_id, job_id, type, scheduled_for, next_attempt_at, priority, exclusive, max_attempts, key)
      SELECT x.trigger_id, j.tenant_id, j.id, j.type, j.run_at, j.run_at, j.priority, j.overlap <> 'allow', j.max_attempts, j.key
        FROM jobs j JOIN jsonb_to_recordset(${input}::jsonb) AS x(id text, trigger_id text) ON x.id = j.id
       WHERE j.tenant_id = ${tenantId} AND j.id = ANY (${ids}::text[]) AND j.run_at IS NOT NULL`,
    counted: sql`
      UPDATE tenant_counters c SET live_jobs = c.live_jobs + a.n
        FROM (SELECT count(*)::int AS n FROM jobs j WHERE j.tenant_id = ${tenantId} AND j.id = ANY (${ids}::text[])) a
       WHERE c.tenant_id = ${tenantId} AND a.n > 0`,
  };
}

/** The call of the create's function (delegated.ts, fairway_create): shardStatements() as one call,
 *  which a Citus cluster sends whole to the tenant's node. Returns the lock's row (`live` NULL: no
 *  counter row) and the inserted jobs. */
function createCall(v: CreateValues): SQL {
  return sql`SELECT fairway_create(${v.tenantId}, ${v.input}::jsonb, ${v.keys}::jsonb, ${v.ids}::text[], ${v.maxJobs}::int) AS r`;
}

/** createCall() of a batch (tests: what the coordinator sends). */
export const createCallOf = (batch: Pending[]): SQL => createCall(createValues(batch));

/** The batch created by shardStatements; again (as insertStatement's row of NULLs says): no counter row,
 *  or fewer jobs inserted than the lock's view admitted (a key committed meanwhile took a slot). */
async function insertOnShard(db: Db, batch: Pending[]): Promise<{ rows: JobRow[]; again: boolean }> {
  const [{ r }] = await query<{ r: unknown }>(db, createCall(createValues(batch)));
  const result = jsonColumn(
    r as { lock: { live: number | null; held: string[] | null }; jobs: Record<string, unknown>[] },
  );
  const rows = jobShape.rows(result.jobs);
  const lock = result.lock;
  if (lock.live === null) return { rows, again: true };
  const held = new Set(lock.held ?? []);
  const keys = new Set<string>();
  let eligible = 0;
  for (const { opts } of batch) {
    const k = opts.idempotencyKey;
    if (k === undefined) eligible++;
    else if (!keys.has(k) && !held.has(k)) eligible++;
    if (k !== undefined) keys.add(k);
  }
  return { rows, again: rows.length < Math.min(eligible, Math.max(0, batch[0].opts.maxJobs - lock.live)) };
}

/** The pool rows of the batch's types the caller does not know to exist (with the defaults). */
async function ensurePools(db: Db, batch: Pending[]): Promise<void> {
  const types = [...new Set(batch.flatMap((w) => (w.opts.poolKnown ? [] : [w.job.type])))];
  if (types.length === 0) return;
  await query(
    db,
    sql`INSERT INTO pools (type)
        SELECT x FROM jsonb_array_elements_text(${JSON.stringify(types)}::jsonb) x
         WHERE NOT EXISTS (SELECT 1 FROM pools p WHERE p.type = x)
        ON CONFLICT DO NOTHING`,
  );
}

/** A tenant's first job: its counter row, from a real count of its live jobs (nothing if the row is
 *  there). Concurrent firsts meet in ON CONFLICT; no job of the tenant is created meanwhile (a create
 *  needs the row's lock). */
async function ensureCounter(db: Db, tenantId: string): Promise<void> {
  await query(
    db,
    // (The tenant's id read from its row: on the distributed layout Citus pushes the insert down to
    // the tenant's shard group.)
    sql`
    INSERT INTO tenant_counters (tenant_id, live_jobs)
    SELECT t.id, count(j.id)::int FROM tenants t
      LEFT JOIN jobs j ON j.tenant_id = t.id AND j.status IN ('active', 'paused')
     WHERE t.id = ${tenantId}
       AND NOT EXISTS (SELECT 1 FROM tenant_counters c WHERE c.tenant_id = ${tenantId})
     GROUP BY t.id
    ON CONFLICT (tenant_id) DO NOTHING`,
  );
}

async function jobsByIdempotencyKey(db: Db, tenantId: string, keys: string[]): Promise<JobRow[]> {
  return db
    .select()
    .from(jobs)
    .where(and(eq(jobs.tenantId, tenantId), inArray(jobs.idempotencyKey, [...new Set(keys)])));
}
