// Live executors (schema.ts, executors): each one upserts its row on every heartbeat; any executor marks
// one whose heartbeat is older than that executor's own timeout as lost, and cuts its claims' leases
// short so the reaper takes its triggers at once rather than when the leases would have run out. The
// cut changes only lease_expires_at: the reaper's write is still fenced by the lease token and by the
// lease having expired, so an executor that was only stalled and renews or settles first keeps its
// trigger, and a late settle of a reaped trigger changes nothing.
import { sql } from "drizzle-orm";
import { jsonColumn, query, withDates, type Db } from "../db.ts";

export interface ExecutorPoolLoad {
  concurrency: number;
  inFlight: number;
}

export interface ExecutorBeat {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: Date;
  heartbeatTimeoutMs: number;
  pools: Record<string, ExecutorPoolLoad>;
}

export interface ExecutorRow extends Omit<ExecutorBeat, "startedAt"> {
  status: "live" | "lost" | "stopped";
  startedAt: Date;
  heartbeatAt: Date;
  stoppedAt: Date | null;
  lostAt: Date | null;
}

/** Registers or refreshes the executor's row. A heartbeat after being marked lost (a stall, not a
 *  death) makes it live again; triggers reaped meanwhile stay reaped (fenced). */
export async function heartbeat(db: Db, b: ExecutorBeat): Promise<void> {
  await query(
    db,
    sql`
    INSERT INTO executors (id, host, pid, version, started_at, heartbeat_at, heartbeat_timeout_ms, pools)
    VALUES (${b.id}, ${b.host}, ${b.pid}, ${b.version}, ${b.startedAt.toISOString()}::timestamptz, now(),
            ${b.heartbeatTimeoutMs}, ${JSON.stringify(b.pools)}::jsonb)
    ON CONFLICT (id) DO UPDATE
      SET heartbeat_at = now(), pools = excluded.pools, heartbeat_timeout_ms = excluded.heartbeat_timeout_ms,
          host = excluded.host, pid = excluded.pid, version = excluded.version, started_at = excluded.started_at,
          stopped_at = NULL, lost_at = NULL`,
  );
}

/** A graceful stop: the executor released what it held and is no longer live. */
export async function markExecutorStopped(db: Db, id: string): Promise<void> {
  await query(db, sql`UPDATE executors SET stopped_at = now(), pools = '{}'::jsonb WHERE id = ${id}`);
}

/** Marks executors whose heartbeat stopped for longer than their timeout as lost, and cuts the leases
 *  of every executor lost in the last `recentMs` (a claim that committed after the mark included) to
 *  now. Returns how many running triggers' leases it cut: the reaper should run. */
export async function expireLostExecutors(db: Db, recentMs = 600_000): Promise<{ lost: string[]; cut: number }> {
  const rows = await query<{ lost: string[] | null; cut: number }>(
    db,
    sql`
    WITH newly AS (
      UPDATE executors SET lost_at = now()
       WHERE lost_at IS NULL AND stopped_at IS NULL
         AND heartbeat_at < now() - make_interval(secs => heartbeat_timeout_ms / 1000.0)
      RETURNING id
    ),
    lost AS (
      SELECT id FROM newly
      UNION SELECT id FROM executors WHERE lost_at > now() - make_interval(secs => ${recentMs}::float8 / 1000)
    ),
    cut AS (
      UPDATE leases l SET expires_at = now()
       WHERE l.owner IN (SELECT id FROM lost) AND l.expires_at > now()
      RETURNING l.token, l.trigger_ids
    ),
    triggers_cut AS (
      UPDATE triggers t SET lease_expires_at = now()
        FROM cut
       WHERE t.id = ANY (cut.trigger_ids) AND t.lease_token = cut.token AND t.status = 'running'
      RETURNING t.id
    )
    SELECT (SELECT array_agg(id) FROM newly) AS lost, (SELECT count(*)::int FROM triggers_cut) AS cut`,
  );
  return { lost: rows[0]?.lost ?? [], cut: rows[0]?.cut ?? 0 };
}

/** Live executors, and those lost or stopped within `recentMs`, newest first. */
export async function listExecutors(db: Db, recentMs = 3_600_000): Promise<ExecutorRow[]> {
  const rows = await query<ExecutorRow>(
    db,
    sql`
    SELECT id, host, pid, version, started_at AS "startedAt", heartbeat_at AS "heartbeatAt",
           heartbeat_timeout_ms AS "heartbeatTimeoutMs", pools, stopped_at AS "stoppedAt", lost_at AS "lostAt",
           CASE WHEN stopped_at IS NOT NULL THEN 'stopped'
                WHEN lost_at IS NOT NULL
                  OR heartbeat_at < now() - make_interval(secs => heartbeat_timeout_ms / 1000.0) THEN 'lost'
                ELSE 'live' END AS status
      FROM executors
     WHERE coalesce(stopped_at, lost_at, heartbeat_at) > now() - make_interval(secs => ${recentMs}::float8 / 1000)
        OR (stopped_at IS NULL AND lost_at IS NULL)
     ORDER BY started_at DESC, id`,
  );
  for (const r of rows) r.pools = jsonColumn(r.pools);
  return withDates(rows, "startedAt", "heartbeatAt", "stoppedAt", "lostAt");
}

/** Forgets executors stopped or lost more than `olderThanMs` ago. */
export async function dropOldExecutors(db: Db, olderThanMs = 86_400_000): Promise<number> {
  const rows = await query<{ id: string }>(
    db,
    sql`DELETE FROM executors
         WHERE coalesce(stopped_at, lost_at) < now() - make_interval(secs => ${olderThanMs}::float8 / 1000)
        RETURNING id`,
  );
  return rows.length;
}
