// One trigger, not its whole job (docs/schedules.md, "Cancel and re-run one trigger"): a user's cancel of a
// pending or running trigger, and a re-run of a finished one as a new trigger. Every statement names
// the tenant on each table it reads or writes, so on a Citus cluster each runs on the tenant's shard
// group alone (docs/scaling.md), and none has a CTE that inserts (Citus would not route it).
import { newId } from "@fairway/core";
import { sql } from "drizzle-orm";
import { jsonColumn, pipelineTx, query, type Db } from "../db.ts";

/** What a re-run sends instead of its job's: the envelope's payload, or a request target's body. */
export interface RerunOverride {
  payload?: unknown;
  body?: unknown;
}

type CancelResult = { kind: "cancelled"; was: "pending" | "running" } | { kind: "finished"; status: string };

/** Cancel a pending or running trigger (reason cancelled_by_user), in one transaction of three
 *  statements sent in one round trip: the row locked, a running one's attempt recorded `cancelled`,
 *  then the trigger `cancelled`. A running one keeps `cancel_requested`: its executor's next poll
 *  (executor cancel-watch.ts) aborts the request; its lease is cleared, so that executor's settle,
 *  fenced by the token, changes nothing and the run is never retried. Leaving `running` uncounts it
 *  from its tenant's and key's running (the queue's sync trigger); a pending one leaves the queue. A
 *  one-time job whose scheduled trigger this was ends `cancelled` and stops counting against maxJobs.
 *  Null: the tenant has no such trigger. */
export async function cancelTrigger(db: Db, tenantId: string, id: string): Promise<CancelResult | null> {
  const at = sql`id = ${id} AND tenant_id = ${tenantId}`;
  const [locked] = (await pipelineTx(db, [
    sql`SELECT status FROM triggers WHERE ${at} FOR UPDATE`,
    // The claim's updated_at is when the run started (renewals leave it).
    sql`INSERT INTO attempt_log (trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, error)
        SELECT id, tenant_id, attempt_count, updated_at,
               greatest(0, round(extract(epoch FROM now() - updated_at) * 1000))::int, 'cancelled',
               'cancelled by its user (POST /v1/triggers/{id}/cancel)'
          FROM triggers WHERE ${at} AND status = 'running'
        ON CONFLICT DO NOTHING`,
    sql`WITH done AS (
          UPDATE triggers SET status = 'cancelled', reason = 'cancelled_by_user', finished_at = now(), updated_at = now(),
                              cancel_requested = (status = 'running'),
                              lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
           WHERE ${at} AND status IN ('pending', 'running')
          RETURNING job_id, kind
        ), job_end AS (
          UPDATE jobs j SET status = 'cancelled', next_fire_at = NULL, updated_at = now()
            FROM done d
           WHERE j.id = d.job_id AND j.tenant_id = ${tenantId} AND d.kind = 'scheduled' AND j.cron IS NULL
             AND j.status = 'active'
          RETURNING j.tenant_id
        )
        UPDATE tenant_counters c SET live_jobs = c.live_jobs - 1
          FROM job_end e WHERE c.tenant_id = e.tenant_id AND c.tenant_id = ${tenantId}`,
  ])) as Array<Array<{ status: string }>>;
  const was = locked?.[0]?.status;
  if (was === undefined) return null;
  if (was === "pending" || was === "running") return { kind: "cancelled", was };
  return { kind: "finished", status: was };
}

type RerunResult = { kind: "created"; id: string } | { kind: "not_finished"; status: string };

/** A finished trigger (succeeded, dead, cancelled, skipped or unknown) re-run: a new trigger of its
 *  job (kind 'rerun', rerun_of the original), due now, with its job's retry budget, priority,
 *  overlap and fairness key as they are now, so it runs within the tenant's and the key's caps and
 *  share like any trigger. `override` replaces what it sends, for this trigger alone; the job is not
 *  changed. One statement; null: the tenant has no such trigger (or it is Fairway's own). */
export async function rerunTrigger(
  db: Db,
  tenantId: string,
  id: string,
  override: RerunOverride | null,
  now: Date,
): Promise<RerunResult | null> {
  const newTrigger = newId("trg");
  const at = now.toISOString();
  const rows = await query<{ id: string }>(
    db,
    sql`INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, priority,
                              exclusive, max_attempts, key, rerun_of, override, created_at, updated_at)
        SELECT ${newTrigger}, t.tenant_id, t.job_id, j.type, 'rerun', ${at}::timestamptz, ${at}::timestamptz,
               j.priority, j.overlap <> 'allow', j.max_attempts, j.key, t.id,
               ${override === null ? null : JSON.stringify(override)}::jsonb, ${at}::timestamptz, ${at}::timestamptz
          FROM triggers t JOIN jobs j ON j.id = t.job_id AND j.tenant_id = t.tenant_id
         WHERE t.id = ${id} AND t.tenant_id = ${tenantId} AND j.tenant_id = ${tenantId} AND j.status <> 'system'
           AND t.status IN ('succeeded', 'dead', 'cancelled', 'skipped', 'unknown')
        RETURNING id`,
  );
  if (rows[0]) return { kind: "created", id: rows[0].id };
  const [found] = await query<{ status: string }>(
    db,
    sql`SELECT t.status FROM triggers t JOIN jobs j ON j.id = t.job_id AND j.tenant_id = t.tenant_id
         WHERE t.id = ${id} AND t.tenant_id = ${tenantId} AND j.tenant_id = ${tenantId} AND j.status <> 'system'`,
  );
  return found ? { kind: "not_finished", status: found.status } : null;
}

/** A re-run's override, for its executor, read just before its request; null: none. */
export async function rerunOverride(db: Db, tenantId: string, id: string): Promise<RerunOverride | null> {
  const [row] = await query<{ override: RerunOverride | string | null }>(
    db,
    sql`SELECT override FROM triggers WHERE id = ${id} AND tenant_id = ${tenantId}`,
  );
  return row?.override == null ? null : jsonColumn(row.override);
}
