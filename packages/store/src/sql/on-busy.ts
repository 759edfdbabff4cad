// onBusy (docs/fairness.md, "onBusy"): what a due trigger of a keyed job does while its key is at
// its cap (tenant_keys.running ≥ the key's maxInFlight). `queue` waits, as every trigger always has and
// this pass leaves alone. `skip`: the trigger is recorded `skipped`, reason `busy`, and never runs.
// `replace_queued`: of the key's due, never-attempted triggers of such jobs only the newest waits; the
// older ones are `cancelled`, reason `replaced`. One statement, run by every executor's materializer
// pass: the claim is not changed (it never starts a trigger of a key at its cap anyway), so the
// decision is made while the trigger waits, within a pass of it becoming due or of the key filling up.
// A trigger whose key frees a slot before a pass sees it runs, as under `queue`.
// Only never-attempted triggers are decided: a retry of a trigger that already ran is not a new trigger.
// The UPDATE re-checks `pending` on the locked row, so a claim that took the trigger first wins and a
// racing pass of another executor changes nothing twice. A one-time job whose trigger is decided so
// ends: completed when skipped, cancelled when replaced, and stops counting against maxJobs.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";

export interface BusyDecisions {
  skipped: number;
  replaced: number;
}

export async function decideBusy(db: Db, now: Date): Promise<BusyDecisions> {
  const rows = await query<{ skipped: number; replaced: number }>(
    db,
    sql`
    WITH busy AS (
      SELECT j.id, j.tenant_id, j.type, j.key, j.on_busy FROM jobs j
        JOIN tenants t ON t.id = j.tenant_id
        JOIN tenant_keys k ON k.tenant_id = j.tenant_id AND k.key = j.key
       WHERE j.on_busy <> 'queue' AND j.status = 'active' AND j.on_busy IN ('skip', 'replace_queued') AND j.key IS NOT NULL
         AND k.running >= CASE WHEN k.override ? 'maxInFlight' THEN (k.override->>'maxInFlight')::int
                               ELSE t.key_max_in_flight END
    ), due AS (
      SELECT q.id, b.on_busy, b.tenant_id, b.key,
             row_number() OVER (PARTITION BY b.tenant_id, b.key, b.on_busy
                                ORDER BY tr.scheduled_for DESC, tr.created_at DESC, q.id DESC) AS newest
        FROM busy b
        JOIN trigger_queue q ON q.tenant_id = b.tenant_id AND q.type = b.type AND q.key = b.key AND q.job_id = b.id
        JOIN triggers tr ON tr.id = q.id
       WHERE q.next_attempt_at <= ${now.toISOString()}::timestamptz AND tr.attempt_count = 0
    ), decided AS (
      UPDATE triggers t
         SET status = CASE d.on_busy WHEN 'skip' THEN 'skipped' ELSE 'cancelled' END,
             reason = CASE d.on_busy WHEN 'skip' THEN 'busy' ELSE 'replaced' END,
             finished_at = now(), updated_at = now()
        FROM due d
       WHERE t.id = d.id AND t.status = 'pending' AND t.attempt_count = 0
         AND (d.on_busy = 'skip' OR d.newest > 1)
      RETURNING t.job_id, t.tenant_id, t.kind, t.status
    ), job_end AS (
      UPDATE jobs j SET status = CASE WHEN d.status = 'skipped' THEN 'completed' ELSE 'cancelled' END,
                        next_fire_at = NULL, updated_at = now()
        FROM decided d
       WHERE j.id = d.job_id AND d.kind = 'scheduled' AND j.cron IS NULL AND j.status = 'active'
      RETURNING j.tenant_id
    ), uncount AS (
      UPDATE tenant_counters c SET live_jobs = c.live_jobs - x.n
        FROM (SELECT tenant_id, count(*)::int AS n FROM job_end GROUP BY tenant_id) x
       WHERE c.tenant_id = x.tenant_id
    )
    SELECT count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
           count(*) FILTER (WHERE status = 'cancelled')::int AS replaced
      FROM decided`,
  );
  return rows[0] ?? { skipped: 0, replaced: 0 };
}
