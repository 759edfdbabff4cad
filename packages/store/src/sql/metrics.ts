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
 *  `tenantId` when given (a tenant reading its own: its pools' figures and its own, no executors nor
 *  capacity, which are the fleet's; every table named with the tenant, so on a Citus cluster the read
 *  goes to its shard alone). */
export async function metricsSnapshot(
  db: Db,
  opts: { topTenants: number; tenantId?: string },
): Promise<MetricsSnapshot> {
  const live = sql`stopped_at IS NULL AND lost_at IS NULL AND heartbeat_at >= now() - make_interval(secs => heartbeat_timeout_ms / 1000.0)`;
  const one = opts.tenantId;
  const c = await poolCounts(db, { tenantId: one });
  const tenant = one === undefined ? sql`t.id` : sql`${one}`;
  const [row] = await query<{ pools: unknown; executors: number; dead: number; tenants: unknown }>(
    db,
    sql`
    WITH ${c.with} types AS (
      SELECT type FROM pools UNION SELECT DISTINCT type FROM tenant_pools ${one === undefined ? sql`` : sql`WHERE tenant_id = ${one}`}
    ),
    cap AS (${
      one === undefined
        ? sql`SELECT p.key AS type, sum((p.value->>'concurrency')::int)::int AS capacity
                FROM executors e CROSS JOIN LATERAL jsonb_each(e.pools) p
               WHERE ${live} GROUP BY 1`
        : sql`SELECT NULL::text AS type, 0 AS capacity WHERE false`
    }),
    pool_rows AS (
      SELECT ty.type, coalesce(p.paused, false) AS paused, ${c.due} AS due, ${c.running} AS running,
             coalesce(c.capacity, 0) AS capacity
        FROM types ty LEFT JOIN pools p ON p.type = ty.type LEFT JOIN cap c ON c.type = ty.type ${c.join}
    ),
    tenant_rows AS (
      SELECT t.id AS "tenantId", t.max_in_flight AS "maxInFlight",
             (SELECT count(*)::int FROM trigger_queue d WHERE d.tenant_id = ${tenant} AND d.next_attempt_at <= now()) AS due,
             (SELECT coalesce(sum(r.running), 0)::int FROM tenant_pools r WHERE r.tenant_id = ${tenant}) AS running,
             (SELECT count(*)::int FROM dead_letters x WHERE x.tenant_id = ${tenant}) AS dead
        FROM tenants t ${one === undefined ? sql`` : sql`WHERE t.id = ${one}`}
    )
    SELECT (SELECT coalesce(json_agg(p ORDER BY p.type), '[]') FROM pool_rows p) AS pools,
           ${one === undefined ? sql`(SELECT count(*)::int FROM executors WHERE ${live})` : sql`0`} AS executors,
           ${one === undefined ? sql`(SELECT count(*)::int FROM dead_letters)` : sql`0`} AS dead,
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
