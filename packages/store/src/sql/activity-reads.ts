// The Activity page's time series: deliveries, failures, fire lag, worker time and dead letters per
// time bucket, for the fleet, one tenant or one fairness key, and the same figures per tenant (or per
// key of one tenant) over the range. Bounded whatever the history: trigger ids are `trg_` + a ULID, so
// each bucket is a range of the primary key, and each bucket reads at most `perBucket` triggers (the
// first created in it) with their attempt_log rows (by its primary key). A bucket that holds more is
// scaled up by the share of its time span those triggers cover, and marked estimated; percentiles
// come from the sample. Figures belong to the bucket their trigger was created in (about its fire).
import { sql } from "drizzle-orm";
import { ulid } from "@fairway/core";
import { query, type Db } from "../db.ts";
import { readShape } from "../layout/detect.ts";
import { scopeTo } from "../layout/scope.ts";

interface ActivityBucket {
  /** Epoch ms of the bucket's start. */
  start: number;
  deliveries: number;
  failures: number;
  workerMs: number;
  dead: number;
  lagP50Ms: number | null;
  lagP95Ms: number | null;
  lagP99Ms: number | null;
  /** More triggers than were read: counts are scaled from the first ones. */
  estimated: boolean;
}

interface ActivityGroup {
  /** A tenant id, or a fairness key ("" for jobs without one) when the read is of one tenant. */
  name: string;
  deliveries: number;
  failures: number;
  workerMs: number;
  dead: number;
  lagP95Ms: number | null;
}

interface ActivitySeries {
  buckets: ActivityBucket[];
  groups: ActivityGroup[];
}

/** A full bucket is counted up to this many times its sample. */
const COUNT_FACTOR = 20;

/** Lowest trigger id created at or after `ms`. */
const lowId = (ms: number) => `trg_${ulid(ms).slice(0, 10)}0000000000000000`;

/** The last `count` buckets of `bucketMs` up to now, read as above; `groups` holds the top 20. */
export async function activitySeries(
  db: Db,
  opts: { nowMs: number; bucketMs: number; count: number; perBucket: number; tenantId?: string; key?: string },
): Promise<ActivitySeries> {
  const end = Math.floor(opts.nowMs / opts.bucketMs) * opts.bucketMs + opts.bucketMs;
  const starts = Array.from({ length: opts.count }, (_, i) => end - (opts.count - i) * opts.bucketMs);
  const bucketList = JSON.stringify(
    starts.map((start, k) => ({ i: k + 1, lo: lowId(start), hi: lowId(start + opts.bucketMs), start })),
  );
  const tenant = opts.tenantId === undefined ? sql`` : sql`AND s.tenant_id = ${opts.tenantId}`;
  const key = opts.key === undefined ? sql`` : sql`AND s.key = ${opts.key}`;
  const group = opts.tenantId === undefined ? sql`f.tenant_id` : sql`coalesce(f.key, '')`;
  const columns = sql`id, tenant_id, key, kind, status, scheduled_for, ok_started_at, ok_duration_ms, created_at`;
  // On the per-tenant layout a read across tenants cannot push a lateral scan to the shards.
  const acrossShards = await readShape(db, { single: false, perTenant: opts.tenantId === undefined });
  // One tenant's sample, on the per-tenant layout, is read on its shard alone.
  const named = await readShape(db, { single: sql``, perTenant: scopeTo(opts.tenantId)("triggers") });
  // Each bucket's first triggers. On a Citus cluster one tenant's are sampled on its shard (the whole
  // read goes there); across tenants a lateral scan cannot be pushed to the shards, so each bucket is
  // a read of its own, the first perBucket of every shard merged on the coordinator.
  const sample = !acrossShards
    ? sql`SELECT b.i, b.start, t.* FROM b CROSS JOIN LATERAL (
          SELECT ${columns} FROM triggers
           WHERE id >= b.lo AND id < b.hi ${named}
           ORDER BY id LIMIT ${opts.perBucket}) t`
    : sql.join(
        starts.map(
          (start, k) =>
            sql`(SELECT ${k + 1}::int AS i, ${start}::float8 AS start, ${columns} FROM triggers
                    WHERE id >= ${lowId(start)} AND id < ${lowId(start + opts.bucketMs)}
                    ORDER BY id LIMIT ${opts.perBucket})`,
        ),
        sql` UNION ALL `,
      );
  const logTenant = opts.tenantId === undefined ? sql`` : sql`AND l.tenant_id = ${opts.tenantId}`;
  // A full bucket's size, counted on the primary key up to COUNT_FACTOR samples: the scale is then
  // size ÷ sample, right for a burst (a backfill's 1,000 triggers in one second) where the time its
  // first triggers span is not. Past the cap, or across a cluster's shards, the time span scales.
  const cap = opts.perBucket * COUNT_FACTOR;
  const sizes = !acrossShards
    ? sql`SELECT b.i, (SELECT count(*) FROM (SELECT 1 FROM triggers
               WHERE id >= b.lo AND id < b.hi ${named}
               LIMIT ${cap}) c)::float8 AS size FROM b WHERE b.i IN (SELECT i FROM s GROUP BY i HAVING count(*) >= ${opts.perBucket})`
    : sql`SELECT NULL::int AS i, NULL::float8 AS size WHERE false`;
  const rows = await query<{
    i: number | null;
    name: string | null;
    deliveries: number;
    failures: number;
    workerMs: number;
    dead: number;
    p50: number | null;
    p95: number | null;
    p99: number | null;
    estimated: boolean;
  }>(
    db,
    sql`
    WITH b AS (
      SELECT * FROM jsonb_to_recordset(${bucketList}::jsonb) AS x(i int, lo text, hi text, start float8)
    ), s AS (${sample}), n AS (${sizes}), w AS (
      -- A full sample: scale by the bucket's counted size ÷ the sample, or (size unknown) by the
      -- bucket's span ÷ the span the sample covers, [bucket start, its last trigger's creation).
      SELECT s.i, count(*) >= ${opts.perBucket} AS estimated,
             CASE WHEN count(*) < ${opts.perBucket} THEN 1
                  WHEN max(n.size) IS NOT NULL AND max(n.size) < ${cap} THEN max(n.size) / count(*)
                  ELSE LEAST(1000, ${opts.bucketMs}::float8 / GREATEST(1,
                    extract(epoch FROM max(s.created_at)) * 1000 - max(s.start))) END AS w
        FROM s LEFT JOIN n USING (i) GROUP BY s.i
    ), f AS (
      SELECT s.*, w.w, w.estimated FROM s JOIN w USING (i) WHERE true ${tenant} ${key}
    ), a AS (
      SELECT f.i, ${group} AS name, f.w, f.ok_duration_ms AS ms, true AS ok,
             CASE WHEN f.kind = 'scheduled' THEN extract(epoch FROM f.ok_started_at - f.scheduled_for) * 1000 END AS lag
        FROM f WHERE f.ok_started_at IS NOT NULL
      UNION ALL
      SELECT f.i, ${group}, f.w, l.duration_ms, l.outcome = 'success',
             CASE WHEN f.kind = 'scheduled' AND l.attempt = 1 THEN extract(epoch FROM l.started_at - f.scheduled_for) * 1000 END
        FROM f JOIN attempt_log l ON l.tenant_id = f.tenant_id AND l.trigger_id = f.id ${logTenant}
    ), dead_b AS (
      SELECT f.i, sum(f.w)::float8 AS dead FROM f WHERE f.status = 'dead' GROUP BY f.i
    ), dead_g AS (
      SELECT ${group} AS name, sum(f.w)::float8 AS dead FROM f WHERE f.status = 'dead' GROUP BY 1
    ), per_bucket AS (
      SELECT a.i, sum(a.w)::float8 AS deliveries, coalesce(sum(a.w) FILTER (WHERE NOT a.ok), 0)::float8 AS failures,
             coalesce(sum(a.w * a.ms), 0)::float8 AS "workerMs",
             percentile_cont(0.5) WITHIN GROUP (ORDER BY a.lag)::float8 AS p50,
             percentile_cont(0.95) WITHIN GROUP (ORDER BY a.lag)::float8 AS p95,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY a.lag)::float8 AS p99
        FROM a GROUP BY a.i
    ), per_group AS (
      SELECT a.name, sum(a.w)::float8 AS deliveries, coalesce(sum(a.w) FILTER (WHERE NOT a.ok), 0)::float8 AS failures,
             coalesce(sum(a.w * a.ms), 0)::float8 AS "workerMs",
             percentile_cont(0.95) WITHIN GROUP (ORDER BY a.lag)::float8 AS p95
        FROM a GROUP BY a.name
    )
    SELECT w.i, NULL AS name, coalesce(p.deliveries, 0) AS deliveries, coalesce(p.failures, 0) AS failures,
           coalesce(p."workerMs", 0) AS "workerMs",
           coalesce(db.dead, 0) AS dead, p.p50, p.p95, p.p99, w.estimated
      FROM w LEFT JOIN per_bucket p USING (i) LEFT JOIN dead_b db USING (i)
    UNION ALL
    SELECT NULL, g.name, g.deliveries, g.failures, g."workerMs",
           coalesce(dg.dead, 0), NULL, g.p95, NULL, false
      FROM (SELECT * FROM per_group ORDER BY deliveries DESC, name LIMIT 20) g LEFT JOIN dead_g dg USING (name)`,
  );
  const byIndex = new Map(rows.filter((r) => r.i !== null).map((r) => [Number(r.i), r]));
  const lag = (v: number | null) => (v == null ? null : Math.max(0, Number(v)));
  const buckets = starts.map((start, k) => {
    const r = byIndex.get(k + 1);
    return {
      start,
      deliveries: Math.round(Number(r?.deliveries ?? 0)),
      failures: Math.round(Number(r?.failures ?? 0)),
      workerMs: Number(r?.workerMs ?? 0),
      dead: Math.round(Number(r?.dead ?? 0)),
      lagP50Ms: lag(r?.p50 ?? null),
      lagP95Ms: lag(r?.p95 ?? null),
      lagP99Ms: lag(r?.p99 ?? null),
      estimated: r?.estimated ?? false,
    };
  });
  const groups = rows
    .filter((r) => r.i === null)
    .map((r) => ({
      name: r.name ?? "",
      deliveries: Math.round(Number(r.deliveries)),
      failures: Math.round(Number(r.failures)),
      workerMs: Number(r.workerMs),
      dead: Math.round(Number(r.dead)),
      lagP95Ms: lag(r.p95),
    }))
    .sort((x, y) => y.deliveries - x.deliveries || x.name.localeCompare(y.name));
  return { buckets, groups };
}
