// onBusy (docs/fairness.md, "onBusy"): what a due trigger of a keyed job does while its key is at
// its cap (tenant_keys.running ≥ the key's maxInFlight). `queue` waits, as every trigger always has and
// this pass leaves alone. `skip`: the trigger is recorded `skipped`, reason `busy`, and never runs.
// `replace_queued`: of the key's due, never-attempted triggers of such jobs only the newest waits; the
// older ones are `cancelled`, reason `replaced`. `cancel_running`: the key's running triggers are
// flagged (cancel_requested); their executors see the flag within a poll (executor/cancel-watch.ts),
// abort the request and record the run `cancelled` (settleCancelled), which frees the slot the new
// trigger waits for. One statement, run by every executor's materializer
// pass: the claim is not changed (it never starts a trigger of a key at its cap anyway), so the
// decision is made while the trigger waits, within a pass of it becoming due or of the key filling up.
// A trigger whose key frees a slot before a pass sees it runs, as under `queue`.
// Only never-attempted triggers are decided: a retry of a trigger that already ran is not a new trigger.
// The UPDATE re-checks `pending` on the locked row, so a claim that took the trigger first wins and a
// racing pass of another executor changes nothing twice. A one-time job whose trigger is decided so
// ends: completed when skipped, cancelled when replaced, and stops counting against maxJobs.
import { sql, type SQL } from "drizzle-orm";
import { pipelineTx, query, type Db } from "../db.ts";
import { scopeTo, type Scope } from "../layout/scope.ts";

export interface BusyDecisions {
  skipped: number;
  /** Replaced (replace_queued) and reaped cancel_running runs, cancelled. */
  replaced: number;
  /** Running triggers asked to stop (cancel_running). */
  cancelling: number;
}

/** `tenantId`: that tenant's keys only, every table read at it, so that on a Citus cluster the statement
 *  runs on its shard group alone (docs/scaling.md); without it, every tenant's. */
export async function decideBusy(db: Db, now: Date, tenantId?: string): Promise<BusyDecisions> {
  const rows = await query<{ skipped: number; replaced: number; cancelling: number }>(db, busyStatement(now, tenantId));
  return rows[0] ?? { skipped: 0, replaced: 0, cancelling: 0 };
}

/** The tenants decideBusy may have work for: a keyed job with an onBusy policy whose key is at its cap,
 *  or with cancel_running (its reaped runs). Read without a lock across every shard (the joins are on
 *  the tenant, so each shard answers for its own): the distributed layout's materializer pass, once,
 *  then one statement per tenant. */
export async function busyPolicyTenants(db: Db): Promise<string[]> {
  const rows = await query<{ tenantId: string }>(
    db,
    sql`SELECT DISTINCT j.tenant_id AS "tenantId" FROM jobs j
          JOIN tenants t ON t.id = j.tenant_id
          JOIN tenant_keys k ON k.tenant_id = j.tenant_id AND k.key = j.key
         WHERE j.on_busy <> 'queue' AND j.status = 'active' AND j.key IS NOT NULL
           AND (j.on_busy = 'cancel_running'
                OR k.running >= CASE WHEN k.override ? 'maxInFlight' THEN (k.override->>'maxInFlight')::int
                                     ELSE t.key_max_in_flight END)
         ORDER BY 1`,
  );
  return rows.map((r) => r.tenantId);
}

export function busyStatement(now: Date, tenantId?: string) {
  const at = (alias: string) => (tenantId === undefined ? sql`` : sql`AND ${sql.raw(alias)}.tenant_id = ${tenantId}`);
  return sql`
    WITH policy AS (
      SELECT j.id, j.tenant_id, j.type, j.key, j.on_busy FROM jobs j
       WHERE j.on_busy <> 'queue' AND j.status = 'active' AND j.key IS NOT NULL ${at("j")}
    ), busy AS (
      SELECT p.* FROM policy p
        JOIN tenants t ON t.id = p.tenant_id
        JOIN tenant_keys k ON k.tenant_id = p.tenant_id AND k.key = p.key
       WHERE true ${tenantId === undefined ? sql`` : sql`AND t.id = ${tenantId}`} ${at("k")} AND k.running >= CASE WHEN k.override ? 'maxInFlight' THEN (k.override->>'maxInFlight')::int
                               ELSE t.key_max_in_flight END
    ), due AS (
      SELECT q.id, b.on_busy, b.tenant_id, b.key,
             row_number() OVER (PARTITION BY b.tenant_id, b.key, b.on_busy
                                ORDER BY tr.scheduled_for DESC, tr.created_at DESC, q.id DESC) AS newest
        FROM busy b
        JOIN trigger_queue q ON q.tenant_id = b.tenant_id AND q.type = b.type AND q.key = b.key AND q.job_id = b.id
        JOIN triggers tr ON tr.id = q.id
       WHERE q.next_attempt_at <= ${now.toISOString()}::timestamptz AND tr.attempt_count = 0 ${at("q")} ${at("tr")}
    ), flagged AS (
      -- cancel_running: the key's running triggers are asked to stop; the new one waits for the slot.
      UPDATE triggers t SET cancel_requested = true
        FROM (SELECT DISTINCT tenant_id, key FROM due WHERE on_busy = 'cancel_running') c
        JOIN jobs j ON j.tenant_id = c.tenant_id AND j.key = c.key
       WHERE t.job_id = j.id AND t.key = c.key AND t.status = 'running' AND NOT t.cancel_requested ${at("t")} ${at("j")}
      RETURNING t.id
    ), reaped AS (
      -- A run asked to stop whose executor died before recording it: reaped back to pending for a
      -- retry, it is cancelled instead (the newer trigger it made way for is the one that runs).
      SELECT q.id FROM (SELECT DISTINCT tenant_id, type, key FROM policy WHERE on_busy = 'cancel_running') p
        JOIN trigger_queue q ON q.tenant_id = p.tenant_id AND q.type = p.type AND q.key = p.key
        JOIN triggers tr ON tr.id = q.id
       WHERE tr.cancel_requested AND tr.attempt_count > 0 ${at("q")} ${at("tr")}
    ), decided AS (
      UPDATE triggers t
         -- (Searched CASEs: Citus sends a simple CASE's WHEN values to the worker as NULL::boolean.)
         SET status = CASE WHEN d.on_busy = 'skip' THEN 'skipped' ELSE 'cancelled' END,
             reason = CASE WHEN d.on_busy = 'skip' THEN 'busy' WHEN d.on_busy = 'replace_queued' THEN 'replaced'
                           ELSE 'cancel_running' END,
             finished_at = now(), updated_at = now()
        FROM (SELECT id, on_busy FROM due WHERE on_busy = 'skip' OR (on_busy = 'replace_queued' AND newest > 1)
              UNION ALL SELECT id, 'cancel_running' FROM reaped) d
       WHERE t.id = d.id AND t.status = 'pending' ${at("t")}
      RETURNING t.job_id, t.tenant_id, t.kind, t.status
    ), job_end AS (
      UPDATE jobs j SET status = CASE WHEN d.status = 'skipped' THEN 'completed' ELSE 'cancelled' END,
                        next_fire_at = NULL, updated_at = now()
        FROM decided d
       WHERE j.id = d.job_id AND d.kind = 'scheduled' AND j.cron IS NULL AND j.status = 'active' ${at("j")}
      RETURNING j.tenant_id
    ), uncount AS (
      UPDATE tenant_counters c SET live_jobs = c.live_jobs - x.n
        FROM (SELECT tenant_id, count(*)::int AS n FROM job_end GROUP BY tenant_id) x
       WHERE c.tenant_id = x.tenant_id ${at("c")}
    )
    SELECT count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
           count(*) FILTER (WHERE status = 'cancelled')::int AS replaced,
           (SELECT count(*)::int FROM flagged) AS cancelling
      FROM decided`;
}

/** Of these held triggers, the ones asked to stop: by a newer trigger of their key (cancel_running,
 *  still running) or by their user (already cancelled, trigger-verbs.ts). `tenantId`: every one is
 *  that tenant's (a Citus cluster polls per tenant: its shard alone). */
export async function cancelRequested(db: Db, ids: string[], scope: Scope): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await query<{ id: string }>(db, cancelRequestedStatement(ids, scope.tenantId));
  return rows.map((r) => r.id);
}

export function cancelRequestedStatement(ids: string[], tenantId?: string) {
  return sql`SELECT id FROM triggers WHERE id = ANY (${`{${ids.join(",")}}`}::text[]) AND cancel_requested
               AND status IN ('running', 'cancelled') ${scopeTo(tenantId)("triggers")}`;
}

/** A run aborted for cancel_running, recorded under its lease: the trigger `cancelled` (reason
 *  cancel_running, never retried; the queue's sync trigger uncounts it from its tenant's and key's
 *  running), its attempt `cancelled`, and a one-time job ends cancelled. Fenced like a settle: a lost
 *  lease changes nothing. Returns whether it was recorded. `tenantId` (a Citus cluster): each statement
 *  at the trigger's tenant, on its shard alone; Citus routes no statement whose CTEs insert, so there
 *  the attempt is recorded by a second statement of the transaction, from the row the first left. */
export async function settleCancelled(
  db: Db,
  t: { id: string; leaseToken: string; attempt: number },
  startedAt: Date,
  durationMs: number,
  error: string,
  scope: Scope,
): Promise<boolean> {
  const statements = settleCancelledStatements(t, startedAt, durationMs, error, scope.tenantId);
  const [rows] = (
    statements.length === 1 ? [await query(db, statements[0]!)] : await pipelineTx(db, statements)
  ) as Array<Array<{ n: number }>>;
  return (rows?.[0]?.n ?? 0) > 0;
}

export function settleCancelledStatements(
  t: { id: string; leaseToken: string; attempt: number },
  startedAt: Date,
  durationMs: number,
  error: string,
  tenantId?: string,
) {
  const at = scopeTo(tenantId);
  const split = tenantId !== undefined;
  // On a cluster the key also holds tenant_id (store citus.ts): no conflict target there.
  const attempt = (from: SQL) => sql`
      INSERT INTO attempt_log (trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, error)
      SELECT id, tenant_id, ${t.attempt}, ${startedAt.toISOString()}::timestamptz, ${Math.round(durationMs)}, 'cancelled', ${error}
        FROM ${from}
      ON CONFLICT ${split ? sql`` : sql`(trigger_id, attempt)`} DO NOTHING`;
  const settled = sql`
    WITH done AS (
      UPDATE triggers SET status = 'cancelled', reason = 'cancel_running', finished_at = now(), updated_at = now(),
                          lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
       WHERE id = ${t.id} AND lease_token = ${t.leaseToken} AND attempt_count = ${t.attempt} AND status = 'running'
             ${at("triggers")}
      RETURNING id, tenant_id, job_id, kind
    ), ${split ? sql`` : sql`att AS (${attempt(sql`done`)}),`} job_end AS (
      UPDATE jobs j SET status = 'cancelled', next_fire_at = NULL, updated_at = now()
        FROM done d
       WHERE j.id = d.job_id AND d.kind = 'scheduled' AND j.cron IS NULL AND j.status = 'active' ${at("j")}
      RETURNING j.tenant_id
    ), uncount AS (
      UPDATE tenant_counters c SET live_jobs = c.live_jobs - 1 FROM job_end e WHERE c.tenant_id = e.tenant_id ${at("c")}
    )
    SELECT count(*)::int AS n FROM done`;
  if (!split) return [settled];
  // The row as the first statement left it, in this transaction (updated at its now()).
  const left = sql`triggers WHERE id = ${t.id} AND tenant_id = ${tenantId} AND status = 'cancelled'
                     AND reason = 'cancel_running' AND attempt_count = ${t.attempt} AND updated_at = now()`;
  return [settled, attempt(left)];
}
