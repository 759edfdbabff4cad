// Enqueue (POST /v1/jobs): the job, its pool row and — for a one-time job — its trigger, in one
// transaction. Idempotency-Key: the unique (tenant, key) index makes concurrent duplicates wait for
// the first and then read its job; a different body under the same key is a conflict.
import { and, eq, sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { jobs, pools, triggers } from "../schema.ts";
import { newId } from "@fairway/core";

export type JobRow = typeof jobs.$inferSelect;
export type NewJob = typeof jobs.$inferInsert & { id: string; tenantId: string };

export type CreateJobResult =
  | { kind: "created"; job: JobRow }
  | { kind: "replayed"; job: JobRow }
  | { kind: "idempotency_conflict" }
  | { kind: "max_jobs"; limit: number };

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
  return db.transaction(async (tx): Promise<CreateJobResult> => {
    let row: JobRow;
    if (opts.idempotencyKey) {
      const inserted = await tx
        .insert(jobs)
        .values({ ...job, idempotencyKey: opts.idempotencyKey, idempotencyHash: opts.requestHash })
        .onConflictDoNothing({ target: [jobs.tenantId, jobs.idempotencyKey] })
        .returning();
      if (inserted.length === 0) {
        const [existing] = await tx
          .select()
          .from(jobs)
          .where(and(eq(jobs.tenantId, job.tenantId), eq(jobs.idempotencyKey, opts.idempotencyKey)));
        if (existing.idempotencyHash !== opts.requestHash) return { kind: "idempotency_conflict" };
        return { kind: "replayed", job: existing };
      }
      row = inserted[0];
    } else {
      [row] = await tx.insert(jobs).values(job).returning();
    }
    if (!opts.poolKnown) await tx.insert(pools).values({ type: job.type }).onConflictDoNothing();
    if (job.runAt) {
      await tx.insert(triggers).values({
        id: newId("trg"),
        tenantId: job.tenantId,
        jobId: job.id,
        type: job.type,
        scheduledFor: job.runAt,
        nextAttemptAt: job.runAt,
        priority: job.priority ?? 0,
        exclusive: (job.overlap ?? "allow") !== "allow",
        maxAttempts: job.maxAttempts,
      });
    }
    // maxJobs, last so the counter row is locked for one round trip: creations for one tenant queue
    // only on this increment (O(1); counting the tenant's jobs made each create O(jobs)).
    if (!(await countLiveJob(tx as unknown as Db, job.tenantId, opts.maxJobs))) throw new MaxJobsExceeded(); // rolls back
    return { kind: "created", job: row };
  }).catch((err: unknown) => {
    if (err instanceof MaxJobsExceeded) return { kind: "max_jobs", limit: opts.maxJobs } as const;
    throw err;
  });
}

class MaxJobsExceeded extends Error {}

/** Count one more live job for the tenant if it stays within maxJobs. The job being created is already
 *  inserted, so a first-time initialisation from a real count includes it. */
async function countLiveJob(db: Db, tenantId: string, maxJobs: number): Promise<boolean> {
  for (let round = 0; round < 3; round++) {
    const bumped = await query<{ n: number }>(
      db,
      sql`UPDATE tenant_counters SET live_jobs = live_jobs + 1
           WHERE tenant_id = ${tenantId} AND live_jobs < ${maxJobs} RETURNING live_jobs AS n`,
    );
    if (bumped.length > 0) return true;
    const init = await query<{ n: number; inserted: boolean }>(
      db,
      sql`
      WITH ins AS (
        INSERT INTO tenant_counters (tenant_id, live_jobs)
        SELECT ${tenantId}, count(*)::int FROM jobs WHERE tenant_id = ${tenantId} AND status IN ('active', 'paused')
        ON CONFLICT (tenant_id) DO NOTHING
        RETURNING live_jobs
      )
      SELECT live_jobs AS n, true AS inserted FROM ins
      UNION ALL
      SELECT live_jobs AS n, false AS inserted FROM tenant_counters WHERE tenant_id = ${tenantId}`,
    );
    const first = init.find((r) => r.inserted);
    if (first) return first.n <= maxJobs; // initialised here, this job included
    if (init.length > 0 && init[0].n >= maxJobs) return false; // at the limit
    // The counter appeared after our increment looked (a concurrent first create committed it), or
    // after this statement's snapshot: try the increment again.
  }
  return false;
}
