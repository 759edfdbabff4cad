// Reads that see the cluster on the distributed layout (docs/scaling.md, "Operations"): the per-pool
// figures across every shard, and each worker node with what it holds. On plain PostgreSQL none of
// this is queried: the per-pool figures keep their correlated subqueries (index probes per type), and
// clusterNodes() is not called (the single layout's nodes() is null).
import { sql, type SQL } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { readShape } from "../layout/detect.ts";
import { scopeTo } from "../layout/scope.ts";

/** `AND <alias>.tenant_id = $tenant`, or nothing without a tenant (layout scopeTo): a read of one
 *  tenant names it on each distributed table, so on a Citus cluster it goes to the tenant's shard alone. */
export function andTenant(alias: string, tenantId: string | undefined): SQL {
  return scopeTo(tenantId)(alias);
}

/** The parts of a per-pool read (a row per type, `ty.type`) that count its running and queued work:
 *  `with` goes first in its WITH list, `join` after its FROM, and `running`, `due`, `pending` are the
 *  columns. On one PostgreSQL each count is a subquery per type (the queue's type index, `due` capped
 *  at `dueCap` rows when given). `tenantId` narrows every count to one tenant: each subquery names it,
 *  so on the layout the read goes to the tenant's shard. Across tenants Citus cannot correlate a
 *  shard's rows with a type, so on the layout the counts are one grouped read of each table, run on
 *  every shard in parallel, joined by type (`due` then shows at most `dueCap`). */
export async function poolCounts(
  db: Db,
  opts: { tenantId?: string; dueCap?: number } = {},
): Promise<{ with: SQL; join: SQL; running: SQL; due: SQL; pending: SQL }> {
  const only = (alias: string) => andTenant(alias, opts.tenantId);
  if (await readShape(db, { single: false, perTenant: opts.tenantId === undefined })) {
    return {
      with: sql`pool_counts AS (
        SELECT coalesce(r.type, q.type) AS type, coalesce(r.running, 0)::int AS running,
               coalesce(q.due, 0)::int AS due, coalesce(q.pending, 0)::int AS pending
          FROM (SELECT r.type, sum(r.running) AS running FROM tenant_pools r GROUP BY r.type) r
          FULL JOIN (SELECT q.type, count(*) FILTER (WHERE q.next_attempt_at <= now()) AS due, count(*) AS pending
                       FROM trigger_queue q GROUP BY q.type) q ON q.type = r.type
      ),`,
      join: sql`LEFT JOIN pool_counts pc ON pc.type = ty.type`,
      running: sql`coalesce(pc.running, 0)`,
      due: opts.dueCap === undefined ? sql`coalesce(pc.due, 0)` : sql`least(coalesce(pc.due, 0), ${opts.dueCap})::int`,
      pending: sql`coalesce(pc.pending, 0)`,
    };
  }
  const due =
    opts.dueCap === undefined
      ? sql`(SELECT count(*)::int FROM trigger_queue q WHERE q.type = ty.type AND q.next_attempt_at <= now() ${only("q")})`
      : sql`(SELECT count(*)::int FROM (SELECT 1 FROM trigger_queue q
            WHERE q.type = ty.type AND q.next_attempt_at <= now() ${only("q")} LIMIT ${opts.dueCap}) q)`;
  return {
    with: sql``,
    join: sql``,
    running: sql`(SELECT coalesce(sum(r.running), 0)::int FROM tenant_pools r WHERE r.type = ty.type ${only("r")})`,
    due,
    pending: sql`(SELECT count(*)::int FROM trigger_queue q WHERE q.type = ty.type ${only("q")})`,
  };
}

export interface ClusterNode {
  /** host:port as the coordinator knows the worker. */
  node: string;
  /** Whether the coordinator reaches it now (citus_check_connection_to_node). */
  up: boolean;
  /** Shard groups placed on it (shards of `tenants`; each holds its tenants' rows of every table). */
  shards: number;
  /** Its tenants, their queued triggers and their running ones; null while it is down. */
  tenants: number | null;
  queued: number | null;
  running: number | null;
}

/** The tables clusterNodes counts on each node, and what it counts of each. */
const NODE_COUNTS = [
  ["tenants", "count(*)"],
  ["trigger_queue", "count(*)"],
  ["tenant_pools", "coalesce(sum(running), 0)"],
] as const;

/** Each worker node of the layout (and the coordinator, when it holds shards): whether it answers, the
 *  shard groups placed on it (the coordinator's metadata) and, when it answers, its tenants and their
 *  queued and running work: one query sent to that node alone, over its own shards. */
export async function clusterNodes(db: Db): Promise<ClusterNode[]> {
  const placements = await query<{ host: string; port: number; rel: string | null; shards: string[] | null }>(
    db,
    sql`
    SELECT n.nodename AS host, n.nodeport AS port, s.logicalrelid::text AS rel,
           array_agg(s.logicalrelid::text || '_' || s.shardid ORDER BY s.shardid) FILTER (WHERE s.shardid IS NOT NULL) AS shards
      FROM pg_dist_node n
      LEFT JOIN pg_dist_placement p ON p.groupid = n.groupid
      LEFT JOIN pg_dist_shard s ON s.shardid = p.shardid
            AND s.logicalrelid IN ('tenants'::regclass, 'trigger_queue'::regclass, 'tenant_pools'::regclass)
     WHERE n.noderole = 'primary' AND n.isactive AND (n.groupid <> 0 OR n.shouldhaveshards)
     GROUP BY 1, 2, 3
     ORDER BY 1, 2, 3`,
  );
  const byNode = new Map<string, { host: string; port: number; shards: Map<string, string[]> }>();
  for (const r of placements) {
    const node = `${r.host}:${r.port}`;
    const entry = byNode.get(node) ?? { host: r.host, port: Number(r.port), shards: new Map() };
    if (r.rel) entry.shards.set(r.rel, r.shards ?? []);
    byNode.set(node, entry);
  }
  return Promise.all(
    [...byNode].map(async ([node, n]) => {
      const up = await nodeAnswers(db, n.host, n.port);
      const counts = up ? await nodeCounts(db, n.host, n.port, n.shards) : null;
      return {
        node,
        up,
        shards: n.shards.get("tenants")?.length ?? 0,
        tenants: counts?.[0] ?? null,
        queued: counts?.[1] ?? null,
        running: counts?.[2] ?? null,
      };
    }),
  );
}

async function nodeAnswers(db: Db, host: string, port: number): Promise<boolean> {
  try {
    const [row] = await query<{ ok: boolean }>(db, sql`SELECT citus_check_connection_to_node(${host}, ${port}) AS ok`);
    return row?.ok === true;
  } catch {
    return false;
  }
}

/** NODE_COUNTS over the node's shards, in one query run on that node (shard names are the table's
 *  name and the shard id: no quoting needed). Null when it fails. */
async function nodeCounts(db: Db, host: string, port: number, shards: Map<string, string[]>): Promise<number[] | null> {
  const parts = NODE_COUNTS.map(([rel, what]) => {
    const names = shards.get(rel) ?? [];
    if (names.length === 0) return "0";
    return `(SELECT ${what} FROM (${names.map((n) => `SELECT * FROM ${n}`).join(" UNION ALL ")}) x)`;
  });
  const command = `SELECT concat_ws(',', ${parts.join(", ")})`;
  try {
    const [row] = await query<{ success: boolean; result: string }>(
      db,
      sql`SELECT success, result FROM master_run_on_worker(ARRAY[${host}::text], ARRAY[${port}::int], ARRAY[${command}::text], false)`,
    );
    if (!row?.success) return null;
    return row.result.split(",").map(Number);
  } catch {
    return null;
  }
}
