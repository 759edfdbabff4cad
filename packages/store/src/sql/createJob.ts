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
  opts: { maxJobs: number; idempotencyKey?: string; requestHash?: string },
): Promise<CreateJobResult> {
  return db.transaction(async (tx): Promise<CreateJobResult> => {
    if (opts.idempotencyKey) {
      const inserted = await tx
        .insert(jobs)
        .values({ ...job, idempotencyKey: opts.idempotencyKey, idempotencyHash: opts.requestHash })
        .onConflictDoNothing({ target: [jobs.tenantId, jobs.idempotencyKey] })
        .returning({ id: jobs.id });
      if (inserted.length === 0) {
        const [existing] = await tx
          .select()
          .from(jobs)
          .where(and(eq(jobs.tenantId, job.tenantId), eq(jobs.idempotencyKey, opts.idempotencyKey)));
        if (existing.idempotencyHash !== opts.requestHash) return { kind: "idempotency_conflict" };
        return { kind: "replayed", job: existing };
      }
    } else {
      await tx.insert(jobs).values(job);
    }
    // maxJobs: serialise creations per tenant with an advisory lock (not the tenant row, which the
    // claimer locks), then count live jobs including this one.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`jobs:${job.tenantId}`}))`);
    const [{ n }] = await query<{ n: number }>(
      tx as unknown as Db,
      sql`SELECT count(*)::int AS n FROM jobs WHERE tenant_id = ${job.tenantId} AND status IN ('active', 'paused')`,
    );
    if (n > opts.maxJobs) throw new MaxJobsExceeded(); // rolls the insert back
    await tx.insert(pools).values({ type: job.type }).onConflictDoNothing();
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
    const [row] = await tx.select().from(jobs).where(eq(jobs.id, job.id));
    return { kind: "created", job: row };
  }).catch((err: unknown) => {
    if (err instanceof MaxJobsExceeded) return { kind: "max_jobs", limit: opts.maxJobs } as const;
    throw err;
  });
}

class MaxJobsExceeded extends Error {}
