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

/** expireLostExecutors() on one PostgreSQL: one statement. */
export async function expireLostAcross(db: Db, recentMs: number): Promise<{ lost: string[]; cut: number }> {
  const rows = await query<{ lost: string[] | null; cut: number }>(
    db,
    sql`
    WITH newly AS (${newlyLost()}),
    lost AS (SELECT id FROM newly UNION ${recentlyLost(recentMs)}),
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

/** On a Citus cluster (docs/scaling.md) `executors` is a table of the coordinator, which no statement
 *  joins with the distributed ones: the lost are marked first, their claims' lease rows read (every
 *  shard, by owner, once per heartbeat), then each tenant's triggers and lease rows cut in one statement
 *  on its shard. The triggers first: a pass that fails part way leaves lease rows uncut, and the next
 *  beat finds them again. */
export async function expireLostOnCluster(db: Db, recentMs: number): Promise<{ lost: string[]; cut: number }> {
  const [marked] = await query<{ newly: string[] | null; lost: string[] | null }>(
    db,
    sql`
    WITH newly AS (${newlyLost()})
    SELECT (SELECT array_agg(id) FROM newly) AS newly,
           ARRAY(SELECT id FROM newly UNION ${recentlyLost(recentMs)}) AS lost`,
  );
  const lost = marked?.lost ?? [];
  if (lost.length === 0) return { lost: [], cut: 0 };
  const held = await query<{ tenantId: string; token: string; triggerIds: string[] }>(
    db,
    sql`SELECT tenant_id AS "tenantId", token, trigger_ids AS "triggerIds" FROM leases
         WHERE owner = ANY (ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(lost)}::jsonb)))
           AND expires_at > now()`,
  );
  const byTenant = new Map<string, Array<{ token: string; ids: string[] }>>();
  for (const l of held) {
    const list = byTenant.get(l.tenantId) ?? [];
    list.push({ token: l.token, ids: l.triggerIds });
    byTenant.set(l.tenantId, list);
  }
  let cut = 0;
  for (const [tenantId, claims] of byTenant) {
    const [row] = await query<{ n: number }>(db, cutLeasesStatement(tenantId, claims));
    cut += row?.n ?? 0;
  }
  return { lost: marked?.newly ?? [], cut };
}

/** Cut one tenant's claims (their lease rows and their triggers still running under them) to now. */
export function cutLeasesStatement(tenantId: string, claims: Array<{ token: string; ids: string[] }>) {
  const pairs = JSON.stringify(claims.flatMap((c) => c.ids.map((id) => ({ id, token: c.token }))));
  return sql`
    WITH triggers_cut AS (
      UPDATE triggers t SET lease_expires_at = now()
        FROM jsonb_to_recordset(${pairs}::jsonb) AS x(id text, token text)
       WHERE t.tenant_id = ${tenantId} AND t.id = x.id AND t.lease_token = x.token AND t.status = 'running'
      RETURNING t.id
    ),
    cut AS (
      UPDATE leases l SET expires_at = now()
       WHERE l.tenant_id = ${tenantId} AND l.token = ANY (${`{${claims.map((c) => c.token).join(",")}}`}::text[])
         AND l.expires_at > now()
    )
    SELECT count(*)::int AS n FROM triggers_cut`;
}

/** Marks the executors silent for longer than their timeout lost; returns their ids. */
const newlyLost = () => sql`
      UPDATE executors SET lost_at = now()
       WHERE lost_at IS NULL AND stopped_at IS NULL
         AND heartbeat_at < now() - make_interval(secs => heartbeat_timeout_ms / 1000.0)
      RETURNING id`;

/** The executors marked lost within `recentMs`. */
const recentlyLost = (recentMs: number) =>
  sql`SELECT id FROM executors WHERE lost_at > now() - make_interval(secs => ${recentMs}::float8 / 1000)`;

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
