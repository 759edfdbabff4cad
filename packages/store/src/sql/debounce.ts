// Debounced one-time jobs (docs/flow-control.md, "Debounce"): creates with the same debounce key fold
// into one job. Trailing (the default): one pending job, which fires `periodMs` after the latest of
// them, never later than `maxWaitMs` after the first. Leading: the first create of a quiet period
// fires at its own time, and the creates within `periodMs` of the latest one (for at most `maxWaitMs`
// after the first) are folded into it and never fire: the job is not changed but for its count.
//
// Exact across API processes: the (tenant, key) row in `debounces` is locked FOR UPDATE first, so the
// creates of one key run one at a time, each in one transaction. Under that lock a create either folds
// into the key's job or makes a new one and points the row at it; a refused create rolls back whole.
// A fold needs the job's trigger still pending, never attempted and not yet due, and locks it FOR
// UPDATE SKIP LOCKED: the claim locks trigger rows SKIP LOCKED too, and claims only a version from
// before its own statement, so exactly one of them takes the trigger. A claim that got it first (or a
// settle or reaper holding it) makes the trigger not foldable: the create starts a new job. A due
// trigger is never locked by a fold, so creates that keep coming cannot keep the claim off it: a job
// whose maxWaitMs has passed fires, and the next create starts a new one. Lock order: the debounce
// row, then the job (as pause and cancel lock it before its triggers), then the trigger, never waited
// for; a new job takes the create's own locks (create-job.ts) after the debounce row. Every statement
// names the tenant, so that on a Citus cluster the transaction runs on its shard group alone
// (docs/scaling.md).
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { jobs } from "../schema.ts";
import { rowShape } from "./columns.ts";
import {
  createJobIn,
  separatePool,
  type CreateJobOptions,
  type CreateJobResult,
  type JobRow,
  type NewJob,
} from "./create-job.ts";

const jobShape = rowShape<JobRow>(jobs);

/** What a debounced job keeps in `jobs.debounce`. `deadline`: the first create's time + maxWaitMs
 *  (ISO), the latest its fire time may be pushed to; null without maxWaitMs. */
export interface DebounceState {
  key: string;
  periodMs: number;
  maxWaitMs: number | null;
  deadline: string | null;
  folded: number;
  /** Absent: trailing (jobs debounced before leading existed have none). */
  mode?: DebounceMode;
  /** Leading: the latest create folded in, or the first (ISO); its quiet period runs from here. */
  lastAt?: string;
}

type DebounceMode = "trailing" | "leading";

export interface DebounceRequest {
  key: string;
  periodMs: number;
  maxWaitMs: number | null;
  mode: DebounceMode;
  /** The create's time (the app clock). */
  now: Date;
  /** The instant the create's own schedule names; the job fires at the later of it and now + periodMs. */
  at: Date;
}

export type DebounceResult =
  | { kind: "created"; job: JobRow }
  | { kind: "joined"; job: JobRow }
  | { kind: "type_mismatch"; job: JobRow }
  | Exclude<CreateJobResult, { kind: "created" | "replayed" }>;

/** Rolls the transaction back with the refusal it carries (nothing written). */
class Refused extends Error {
  constructor(readonly result: DebounceResult) {
    super(result.kind);
  }
}

/** A one-time job created with `debounce`: folded into the key's pending job, or created (`job` has
 *  no `runAt` yet: it is set here). */
export async function createDebounced(
  db: Db,
  job: NewJob,
  opts: CreateJobOptions,
  d: DebounceRequest,
): Promise<DebounceResult> {
  // Leading fires at the create's own time; trailing no sooner than a quiet period after it.
  const want = d.mode === "leading" ? d.at.getTime() : Math.max(d.at.getTime(), d.now.getTime() + d.periodMs);
  const separate = await separatePool(db);
  try {
    return await db.transaction(async (tx) => {
      for (;;) {
        const [row] = await query<{ job_id: string }>(
          tx,
          sql`SELECT job_id FROM debounces WHERE tenant_id = ${job.tenantId} AND key = ${d.key} FOR UPDATE`,
        );
        if (row) {
          const folded = await (d.mode === "leading"
            ? foldLeading(tx, job, row.job_id, d.now)
            : fold(tx, job, row.job_id, want, d.now));
          if (folded) return folded;
          const made = await createFirst(tx, job, opts, d, want, separate);
          await query(
            tx,
            sql`UPDATE debounces SET job_id = ${made.job.id}, updated_at = now()
                 WHERE tenant_id = ${job.tenantId} AND key = ${d.key}`,
          );
          return made;
        }
        // The key's first create: the row, or, when a concurrent create just made it (this insert
        // waited for its commit), round again to lock that one.
        const inserted = await query(
          tx,
          sql`INSERT INTO debounces (tenant_id, key, job_id) VALUES (${job.tenantId}, ${d.key}, ${job.id})
              ON CONFLICT DO NOTHING RETURNING job_id`,
        );
        if (inserted.length > 0) return createFirst(tx, job, opts, d, want, separate);
      }
    });
  } catch (err) {
    if (err instanceof Refused) return err.result;
    throw err;
  }
}

/** A new debounced job: fires at `want`, or at the deadline if sooner. */
async function createFirst(
  tx: Db,
  job: NewJob,
  opts: CreateJobOptions,
  d: DebounceRequest,
  want: number,
  separate: boolean,
): Promise<{ kind: "created"; job: JobRow }> {
  const deadline = d.maxWaitMs === null ? null : d.now.getTime() + d.maxWaitMs;
  const state: DebounceState = {
    key: d.key,
    periodMs: d.periodMs,
    maxWaitMs: d.maxWaitMs,
    deadline: deadline === null ? null : new Date(deadline).toISOString(),
    folded: 0,
    ...(d.mode === "leading" ? { mode: d.mode, lastAt: d.now.toISOString() } : {}),
  };
  // A leading job's deadline ends its quiet period, not its fire time.
  const runAt = new Date(deadline === null || d.mode === "leading" ? want : Math.min(want, deadline));
  const result = await createJobIn(tx, { ...job, runAt, nextFireAt: null, debounce: state }, opts, separate);
  if (result.kind !== "created") throw new Refused(result as DebounceResult);
  return result;
}

/** A jsonb parameter: SQL NULL for null, as a create stores it. */
const jsonOrNull = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** Folds the create into the key's job when its trigger is still pending, never attempted and not yet
 *  due (by the create's clock): the job's payload and target become the create's, its fire time moves
 *  to `want` (never earlier than it was, never past the deadline). Null when the job cannot take it. */
async function fold(tx: Db, job: NewJob, jobId: string, want: number, now: Date): Promise<DebounceResult | null> {
  const [current] = jobShape.rows(
    await query(
      tx,
      sql`SELECT ${jobShape.list} FROM jobs
           WHERE id = ${jobId} AND tenant_id = ${job.tenantId} AND status = 'active' AND debounce IS NOT NULL
             FOR NO KEY UPDATE`,
    ),
  );
  if (!current) return null;
  const [trigger] = await query<{ id: string; due_ms: string | number }>(
    tx,
    sql`SELECT id, (extract(epoch FROM next_attempt_at) * 1000)::float8 AS due_ms FROM triggers
         WHERE tenant_id = ${job.tenantId} AND job_id = ${jobId} AND kind = 'scheduled' AND status = 'pending' AND attempt_count = 0
           AND next_attempt_at > ${now.toISOString()}::timestamptz
           FOR UPDATE SKIP LOCKED`,
  );
  if (!trigger) return null;
  if (current.type !== job.type) throw new Refused({ kind: "type_mismatch", job: current });
  const state = current.debounce as DebounceState;
  if (state.mode === "leading") return null; // the key changed modes: a new job
  const capped = state.deadline === null ? want : Math.min(want, Date.parse(state.deadline));
  const due = new Date(Math.max(capped, Number(trigger.due_ms)));
  const next: DebounceState = { ...state, folded: state.folded + 1 };
  const [updated] = jobShape.rows(
    await query(
      tx,
      sql`UPDATE jobs SET payload = ${jsonOrNull(job.payload)}::jsonb,
                          target = ${jsonOrNull(job.target)}::jsonb,
                          run_at = ${due.toISOString()}::timestamptz, debounce = ${JSON.stringify(next)}::jsonb, updated_at = ${now.toISOString()}::timestamptz
           WHERE tenant_id = ${job.tenantId} AND id = ${jobId}
          RETURNING ${jobShape.list}`,
    ),
  );
  await query(
    tx,
    sql`UPDATE triggers SET scheduled_for = ${due.toISOString()}::timestamptz,
                        next_attempt_at = ${due.toISOString()}::timestamptz, updated_at = ${now.toISOString()}::timestamptz
         WHERE tenant_id = ${job.tenantId} AND id = ${trigger.id}`,
  );
  return { kind: "joined", job: updated };
}

/** Leading: folds the create into the key's job while its quiet period lasts (less than periodMs since
 *  the latest create it folded, and before its deadline), whatever its trigger has done since: the
 *  job's count and quiet period move on, nothing else. Null when the period is over (or the key's job
 *  is a trailing one, or cancelled): the create makes a new job, which fires. */
async function foldLeading(tx: Db, job: NewJob, jobId: string, now: Date): Promise<DebounceResult | null> {
  const [current] = jobShape.rows(
    await query(
      tx,
      sql`SELECT ${jobShape.list} FROM jobs
           WHERE id = ${jobId} AND tenant_id = ${job.tenantId} AND status <> 'cancelled' AND debounce IS NOT NULL
             FOR NO KEY UPDATE`,
    ),
  );
  const state = current?.debounce as DebounceState | undefined;
  if (!current || state?.mode !== "leading" || state.lastAt === undefined) return null;
  const t = now.getTime();
  if (t - Date.parse(state.lastAt) >= state.periodMs) return null;
  if (state.deadline !== null && t >= Date.parse(state.deadline)) return null;
  if (current.type !== job.type) throw new Refused({ kind: "type_mismatch", job: current });
  const next: DebounceState = { ...state, folded: state.folded + 1, lastAt: now.toISOString() };
  const [updated] = jobShape.rows(
    await query(
      tx,
      sql`UPDATE jobs SET debounce = ${JSON.stringify(next)}::jsonb, updated_at = ${now.toISOString()}::timestamptz
           WHERE tenant_id = ${job.tenantId} AND id = ${jobId}
          RETURNING ${jobShape.list}`,
    ),
  );
  return { kind: "joined", job: updated };
}
