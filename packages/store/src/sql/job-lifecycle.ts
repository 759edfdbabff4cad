// Job lifecycle: pause, resume, cancel, run now, update. Each is one transaction and
// takes effect at once; what happens to pending triggers is explicit and leaves a reason. Every
// statement names the job's tenant on each table, so that on a Citus cluster the transaction runs on
// the tenant's shard group alone (docs/scaling.md).
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { jobs, triggers } from "../schema.ts";
import { newId } from "@fairway/core";
import type { JobRow } from "./create-job.ts";

const live = inArray(jobs.status, ["active", "paused"]);

/** Pause: no new triggers, and pending ones are cancelled with reason 'paused' (visible, not silent).
 *  Running ones finish. Resume re-plans the gap under the job's misfire policy. */
export async function pauseJob(db: Db, tenantId: string, jobId: string): Promise<JobRow | null> {
  return db.transaction(async (tx) => {
    const [job] = await tx
      .update(jobs)
      .set({ status: "paused", pauseReason: null, updatedAt: new Date() })
      .where(and(eq(jobs.id, jobId), eq(jobs.tenantId, tenantId), live))
      .returning();
    if (!job) return null;
    if (!job.cron) {
      await cancelPending(tx, tenantId, jobId, "paused");
      return job;
    }
    // Fires the materializer wrote ahead are cancelled too, and the schedule goes back to them, so after
    // a resume they are planned again like any other (the misfire policy if they passed meanwhile). Only
    // rows cancelled here: every pending, never-attempted scheduled row belongs to the current schedule
    // (a PATCH cancels the old one's), so next_fire_at stays an instant of it.
    const rewound = await cancelAndRewind(tx, tenantId, jobId, cancelPendingSql(tenantId, jobId, "paused"));
    if (rewound) job.nextFireAt = rewound;
    return job;
  });
}

/** Resume: the gap since the pause is handled by the job's misfire policy (the materializer sees
 *  next_fire_at in the past). A one-time job whose trigger was cancelled by the pause gets a new one. */
export async function resumeJob(db: Db, tenantId: string, jobId: string, now: Date): Promise<JobRow | null> {
  return db.transaction(async (tx) => {
    const [job] = await tx
      .update(jobs)
      // A resumed job starts a new failure streak (auto-pause, notification-fanout.ts).
      .set({ status: "active", pauseReason: null, failureStreak: 0, updatedAt: now })
      .where(and(eq(jobs.id, jobId), eq(jobs.tenantId, tenantId), live))
      .returning();
    if (!job) return null;
    if (!job.cron && job.runAt) {
      const open = await query<{ n: number }>(
        tx,
        sql`SELECT count(*)::int AS n FROM triggers
             WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND status IN ('pending', 'running', 'succeeded')`,
      );
      if (open[0].n === 0) await insertManualTrigger(tx, job, now, "scheduled", job.runAt > now ? job.runAt : now);
    }
    return job;
  });
}

/** DELETE: the job is cancelled (kept for history) and its pending triggers are cancelled. Running
 *  triggers finish; their settle does not revive the job. */
export async function cancelJob(db: Db, tenantId: string, jobId: string): Promise<JobRow | null> {
  return db.transaction(async (tx) => {
    const [before] = await tx
      .select({ status: jobs.status })
      .from(jobs)
      .where(and(eq(jobs.id, jobId), eq(jobs.tenantId, tenantId)))
      .for("update");
    const [job] = await tx
      .update(jobs)
      .set({ status: "cancelled", nextFireAt: null, updatedAt: new Date() })
      .where(
        and(
          eq(jobs.id, jobId),
          eq(jobs.tenantId, tenantId),
          inArray(jobs.status, ["active", "paused", "completed", "failed"]),
        ),
      )
      .returning();
    if (!job) return null;
    await cancelPending(tx, tenantId, jobId, "job_cancelled");
    if (before.status === "active" || before.status === "paused") {
      // No longer live: it stops counting against maxJobs.
      await tx.execute(sql`UPDATE tenant_counters SET live_jobs = live_jobs - 1 WHERE tenant_id = ${tenantId}`);
    }
    return job;
  });
}

/** Run now: a manual trigger with its own id; it never collides with a scheduled instant. */
export async function runJobNow(db: Db, tenantId: string, jobId: string, now: Date) {
  return db.transaction(async (tx) => {
    const [job] = await tx
      .select()
      .from(jobs)
      .where(and(eq(jobs.id, jobId), eq(jobs.tenantId, tenantId), live));
    if (!job) return null;
    return insertManualTrigger(tx, job, now, "manual", now);
  });
}

export type JobPatch = Partial<
  Pick<
    JobRow,
    | "name"
    | "cron"
    | "timezone"
    | "spreadMs"
    | "runAt"
    | "target"
    | "payload"
    | "maxAttempts"
    | "initialDelayMs"
    | "maxDelayMs"
    | "backoff"
    | "jitter"
    | "timeoutMs"
    | "priority"
    | "overlap"
    | "misfire"
    | "catchupWindowMs"
    | "nextFireAt"
    | "notify"
    | "key"
    | "onBusy"
    | "tags"
  >
>;

/** PATCH: takes effect from the next fire — including fires the materializer already wrote ahead (its
 *  lookahead). A changed schedule replaces not-yet-due pending triggers; a changed overlap policy has
 *  them decided again; retry limits, priority, target and payload apply to every trigger not started. */
export async function updateJob(db: Db, tenantId: string, jobId: string, patch: JobPatch, now: Date) {
  return db.transaction(async (tx) => {
    // The overlap policy before the change (row locked, so no materializer pass runs in between).
    const [before] =
      "overlap" in patch
        ? await tx
            .select({ overlap: jobs.overlap })
            .from(jobs)
            .where(and(eq(jobs.id, jobId), eq(jobs.tenantId, tenantId)))
            .for("update")
        : [];
    const [job] = await tx
      .update(jobs)
      .set({ ...patch, updatedAt: now })
      .where(and(eq(jobs.id, jobId), eq(jobs.tenantId, tenantId), live))
      .returning();
    if (!job) return null;
    const rescheduled = "cron" in patch || "timezone" in patch || "spreadMs" in patch || "runAt" in patch;
    if (!rescheduled && job.cron && before && before.overlap !== job.overlap) {
      // Fires written ahead were decided under the old policy (overlap check, exclusive flag). Those not
      // yet due are cancelled and the schedule goes back to the first of them: the materializer decides
      // them again under the new policy, reviving each row (same id) — as a schedule change would.
      const rewound = await cancelAndRewind(
        tx,
        tenantId,
        jobId,
        sql`${notStartedFiresSql(tenantId, jobId, "rescheduled")} AND next_attempt_at > now()`,
      );
      if (rewound) job.nextFireAt = rewound;
    }
    if ("maxAttempts" in patch) {
      await tx.execute(sql`
        UPDATE triggers SET max_attempts = ${job.maxAttempts}, updated_at = now()
         WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND status = 'pending' AND attempt_count = 0`);
    }
    if (rescheduled) {
      await tx.execute(notStartedFiresSql(tenantId, jobId, "rescheduled"));
      if (!job.cron && job.runAt && job.status === "active") {
        await insertManualTrigger(tx, job, now, "scheduled", job.runAt);
      }
    }
    if ("priority" in patch) {
      await tx.execute(
        sql`UPDATE triggers SET priority = ${job.priority}
             WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND status = 'pending' AND kind <> 'backfill'`,
      );
    }
    // Its triggers not started move to the new key (their queue rows and key counts follow, migration
    // 0021); running ones finish under the key they were claimed and counted in.
    if ("key" in patch) {
      await tx.execute(
        sql`UPDATE triggers SET key = ${job.key}
             WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND status = 'pending' AND key IS DISTINCT FROM ${job.key}`,
      );
    }
    return job;
  });
}

/** The job's pending triggers, cancelled. One that another transaction holds this moment is left to it
 *  (SKIP LOCKED): a claim taking it (it runs, as if claimed just before this change) or a settle ending
 *  it. Waiting for it while this transaction holds the job's row is the other half of a settle's order,
 *  trigger rows before job rows (docs/guarantees.md, "Lock order"). */
export const cancelPendingSql = (tenantId: string, jobId: string, reason: string, extra = sql``) => sql`
    UPDATE triggers SET status = 'cancelled', reason = ${reason}, finished_at = now(), updated_at = now()
     WHERE tenant_id = ${tenantId} AND id IN (
       SELECT p.id FROM triggers p
        WHERE p.tenant_id = ${tenantId} AND p.job_id = ${jobId} AND p.status = 'pending' ${extra}
          FOR UPDATE SKIP LOCKED)`;

/** The job's scheduled fires not yet attempted, cancelled: the rows a schedule change replaces. */
const notStartedFiresSql = (tenantId: string, jobId: string, reason: string) =>
  cancelPendingSql(tenantId, jobId, reason, sql`AND p.kind = 'scheduled' AND p.attempt_count = 0`);

/** Cancel triggers with `cancel` (an UPDATE of the job's triggers) and move the job's next_fire_at back
 *  to the first cancelled fire that was not yet due: next_fire_at is already past the fires the
 *  materializer wrote ahead (its lookahead), which would otherwise never fire. Planned again, each is
 *  revived, same id. Returns the new next_fire_at, or null when it did not move. */
async function cancelAndRewind(db: Db, tenantId: string, jobId: string, cancel: SQL): Promise<Date | null> {
  const [r] = await query<{ nextFireAt: Date | string | null }>(
    db,
    sql`
    WITH cancelled AS (${cancel} RETURNING kind, scheduled_for, attempt_count, next_attempt_at)
    UPDATE jobs SET next_fire_at = LEAST(next_fire_at, t.first)
      FROM (SELECT min(scheduled_for) AS first FROM cancelled
             WHERE kind = 'scheduled' AND attempt_count = 0 AND next_attempt_at > now()) t
     WHERE jobs.tenant_id = ${tenantId} AND jobs.id = ${jobId} AND t.first IS NOT NULL
    RETURNING jobs.next_fire_at AS "nextFireAt"`,
  );
  return r?.nextFireAt == null ? null : new Date(r.nextFireAt);
}

async function cancelPending(db: Db, tenantId: string, jobId: string, reason: string) {
  await db.execute(cancelPendingSql(tenantId, jobId, reason));
}

/** Manual runs (kind 'manual') never collide in the (job, instant) unique index (their key is NULL
 *  there). A one-time job's scheduled trigger may meet its own earlier row at the same instant
 *  (cancelled by a pause or a reschedule): that row is revived — same id, same webhook-id — because
 *  there is at most one trigger per (job, instant), ever; a live or finished row is left alone. (Two
 *  statements, as the index is on an expression, which drizzle's conflict target cannot name. The
 *  insert waits for a concurrent insert of the same instant, and the update then sees its row.) */
async function insertManualTrigger(db: Db, job: JobRow, now: Date, kind: "manual" | "scheduled", at: Date) {
  const [row] = await db
    .insert(triggers)
    .values({
      id: newId("trg"),
      tenantId: job.tenantId,
      jobId: job.id,
      type: job.type,
      kind,
      scheduledFor: at,
      nextAttemptAt: at,
      priority: job.priority,
      exclusive: job.overlap !== "allow",
      maxAttempts: job.maxAttempts,
      key: job.key,
      createdAt: now,
    })
    .onConflictDoNothing()
    .returning();
  if (row || kind === "manual") return row ?? null;
  const [revived] = await db
    .update(triggers)
    .set({
      status: "pending",
      reason: null,
      finishedAt: null,
      nextAttemptAt: at,
      priority: job.priority,
      key: job.key,
      updatedAt: now,
    })
    .where(
      and(
        eq(triggers.tenantId, job.tenantId),
        eq(triggers.jobId, job.id),
        eq(triggers.scheduledFor, at),
        eq(triggers.kind, "scheduled"),
        eq(triggers.status, "cancelled"),
        inArray(triggers.reason, ["paused", "rescheduled"]),
      ),
    )
    .returning();
  return revived ?? null;
}
