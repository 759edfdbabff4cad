// The database-derived gauges of /metrics and /v1/metrics: read at scrape time from the tables that
// already keep them (the queue, the pools' running counts, the dead letters, the executors' heartbeats),
// so every runtime — the Node server and the Worker — serves the same numbers.
import { sql } from "drizzle-orm";
import { jsonColumn, query, type Db } from "../db.ts";
import { poolCounts } from "./cluster-reads.ts";

interface PoolGauges {
  type: string;
  paused: boolean;
  due: number;
  running: number;
  /** Slots of this type over the live executors (their last heartbeats). */
  capacity: number;
}

interface TenantGauges {
  tenantId: string;
  due: number;
  running: number;
  dead: number;
  maxInFlight: number;
}

export interface MetricsSnapshot {
  pools: PoolGauges[];
  executors: number;
  /** Dead letters kept now, fleet-wide (a replay removes one, retention deletes them after deadRetentionDays). */
  deadLetters: number;
  tenants: TenantGauges[];
}

/** Per pool gauges, live executors, and the `topTenants` busiest tenants (running + due), or just
 *  `tenantId` when given (a tenant reading its own). */
export async function metricsSnapshot(
  db: Db,
  opts: { topTenants: number; tenantId?: string },
): Promise<MetricsSnapshot> {
  const live = sql`stopped_at IS NULL AND lost_at IS NULL AND heartbeat_at >= now() - make_interval(secs => heartbeat_timeout_ms / 1000.0)`;
  const c = await poolCounts(db, { tenantId: opts.tenantId });
  const tenantFilter = opts.tenantId === undefined ? sql`` : sql`AND t.id = ${opts.tenantId}`;
  const [row] = await query<{ pools: unknown; executors: number; dead: number; tenants: unknown }>(
    db,
    sql`
    WITH ${c.with} types AS (SELECT type FROM pools UNION SELECT DISTINCT type FROM tenant_pools),
    cap AS (
      SELECT p.key AS type, sum((p.value->>'concurrency')::int)::int AS capacity
        FROM executors e CROSS JOIN LATERAL jsonb_each(e.pools) p
       WHERE ${live} GROUP BY 1
    ),
    pool_rows AS (
      SELECT ty.type, coalesce(p.paused, false) AS paused, ${c.due} AS due, ${c.running} AS running,
             coalesce(c.capacity, 0) AS capacity
        FROM types ty LEFT JOIN pools p ON p.type = ty.type LEFT JOIN cap c ON c.type = ty.type ${c.join}
    ),
    tenant_rows AS (
      SELECT t.id AS "tenantId", t.max_in_flight AS "maxInFlight",
             (SELECT count(*)::int FROM trigger_queue d WHERE d.tenant_id = t.id AND d.next_attempt_at <= now()) AS due,
             (SELECT coalesce(sum(r.running), 0)::int FROM tenant_pools r WHERE r.tenant_id = t.id) AS running,
             (SELECT count(*)::int FROM dead_letters x WHERE x.tenant_id = t.id) AS dead
        FROM tenants t WHERE true ${tenantFilter}
    )
    SELECT (SELECT coalesce(json_agg(p ORDER BY p.type), '[]') FROM pool_rows p) AS pools,
           (SELECT count(*)::int FROM executors WHERE ${live}) AS executors,
           ${opts.tenantId === undefined ? sql`(SELECT count(*)::int FROM dead_letters)` : sql`0`} AS dead,
           (SELECT coalesce(json_agg(x), '[]') FROM (SELECT * FROM tenant_rows
              ORDER BY running + due DESC, "tenantId" LIMIT ${opts.topTenants}) x) AS tenants`,
  );
  return {
    pools: jsonColumn(row.pools as PoolGauges[]),
    executors: Number(row.executors),
    deadLetters: Number(row.dead),
    tenants: jsonColumn(row.tenants as TenantGauges[]),
  };
}
