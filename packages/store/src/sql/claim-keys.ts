// Fairness keys, the second level of the claim (claim.ts; docs/fairness.md, docs/decisions/0025): a tenant
// with keyed work queued fills its slots from keyedIds() instead of dueIds(): its keys' due triggers in the
// order of their own WFQ slots (key vtime, weight, cost), each key within its cap and rate. The tenant lock
// of the claim's statement 1 serialises every claim of the tenant's keys, so tenant_keys.running, read
// after it and raised in the same statement (keyCharge), is exact across executors, as
// tenant_pools.running is for the tenant. A tenant with nothing keyed queued takes the path it always did.
import { sql, type SQL } from "drizzle-orm";
import { boundedKeyRate, boundedKeyWeight } from "./columns.ts";

/** A claim's scope. For one tenant (`one`: its id, bound), `at(alias)` adds `AND alias.tenant_id = one`
 *  and `tenant(expr)` is the tenant in place of `expr` (a correlated reference): on a Citus cluster a
 *  statement of one tenant names it on every distributed table it reads or writes (docs/scaling.md).
 *  Across tenants both leave the statement as it is. */
export function scopeOf(one?: SQL) {
  return {
    at: (alias: string) => (one === undefined ? sql`` : sql`AND ${sql.raw(alias)}.tenant_id = ${one}`),
    tenant: (expr: SQL) => one ?? expr,
  };
}

/** A key's policy in force (its override's fields over its tenant's defaults) and its rate tokens now,
 *  for the tenant_keys row `k` of the tenant whose row (cand or tenants) is `c`. */
export function keyPolicy(k: SQL, c: SQL): SQL {
  return sql`
    SELECT p0.cap, p0.weight, p0.rate,
           CASE WHEN p0.rate IS NULL THEN NULL ELSE
             least(greatest(1, ceil(p0.rate))::float8,
                   coalesce(${k}.rate_tokens, greatest(1, ceil(p0.rate))::float8)
                   + extract(epoch FROM now() - coalesce(${k}.rate_updated_at, now())) * p0.rate)
           END AS tokens
      FROM (SELECT CASE WHEN ${k}.override ? 'maxInFlight' THEN (${k}.override->>'maxInFlight')::int
                        ELSE ${c}.key_max_in_flight END AS cap,
                   ${boundedKeyWeight(sql`coalesce((${k}.override->>'weight')::float8, ${c}.key_weight)`)} AS weight,
                   ${boundedKeyRate(sql`CASE WHEN ${k}.override ? 'ratePerSecond' THEN (${k}.override->>'ratePerSecond')::float8
                        ELSE ${c}.key_rate_per_second END`)} AS rate) p0`;
}

/** The second level: a keyed tenant's (cand row `c`) due triggers, up to `limit`, in the order of its
 *  keys' WFQ slots — key j's k-th slot at vtime_j + (k − 1) · cost ÷ weight_j, ties by key, where cost
 *  is the tenant's run-time estimate in the pool (schema.ts, tenantKeys: vtime). Only keys
 *  with queued work are read, in vtime order from tenant_keys_due_idx, and only the first `limit` with
 *  room: a key's room is min(cap − running, rate tokens, its due rows), and a key with none is passed
 *  over by one probe. A key is backlogged from the vtime it was queued at (migration 0021: never below
 *  the least backlogged key's), so no clock is read here. The tenant's triggers without a key, among
 *  its first `limit` due rows in claim order, take part as one more key (the empty string, which no
 *  key is) that starts level with the least key each claim and carries no ledger. `one`: the claim is
 *  for this one tenant (claim.ts, ClaimInput.tenantId), and every table is read at it. */
export function keyedIds(type: string, limit: SQL, one?: SQL): SQL {
  const { at, tenant } = scopeOf(one);
  return sql`ARRAY(
    WITH kk AS (
      SELECT k.key, k.vtime + k.vcorr AS vtime, c.cost_ms / p.weight AS step, d.ids
        FROM tenant_keys k
       CROSS JOIN LATERAL (${keyPolicy(sql`k`, sql`c`)}) p
       CROSS JOIN LATERAL (SELECT ARRAY(
               SELECT x.id FROM trigger_queue x
                WHERE x.tenant_id = ${tenant(sql`k.tenant_id`)} AND x.type = ${type} AND x.key = k.key AND x.next_attempt_at <= now()
                  AND ${exclusiveFree(sql`x`, one)}
                ORDER BY x.priority DESC NULLS LAST, x.next_attempt_at
                LIMIT greatest(0, least(${limit}, coalesce(p.cap - k.running, ${limit}),
                                        coalesce(floor(p.tokens)::int, ${limit})))) AS ids
               -- Not pulled up: the array is built once per key, not once per reference to it.
               OFFSET 0) d
       WHERE k.tenant_id = c.id ${at("k")} AND k.queued > 0 AND cardinality(d.ids) > 0
       ORDER BY k.vtime, k.key
       LIMIT ${limit}
    ),
    bare AS (
      SELECT y.id, row_number() OVER () AS n FROM (
        SELECT x.id, x.key FROM trigger_queue x
         WHERE x.tenant_id = ${tenant(sql`c.id`)} AND x.type = ${type} AND x.next_attempt_at <= now()
           AND ${exclusiveFree(sql`x`, one)}
         ORDER BY x.priority DESC NULLS LAST, x.next_attempt_at
         LIMIT ${limit}) y
       WHERE y.key IS NULL
    )
    SELECT s.id FROM (
      SELECT kk.ids[g.k] AS id, kk.vtime + (g.k - 1) * kk.step AS vt, kk.key, g.k
        FROM kk CROSS JOIN LATERAL generate_series(1, cardinality(kk.ids)) AS g(k)
      UNION ALL
      SELECT bare.id, coalesce((SELECT min(vtime) FROM kk), 0) + (bare.n - 1) * c.cost_ms / ${boundedKeyWeight(sql`c.key_weight`)}, '', bare.n
        FROM bare
    ) s
    ORDER BY s.vt, s.key, s.k
    LIMIT ${limit})`;
}

/** The keys' ledger after a claim, read from its CTEs "claimed" (with key), "dequeued" (tenant_id,
 *  key) and "cand": each key's queued count less its rows that left the queue, its running count and
 *  vtime charged by what it got (its tenant's estimate ÷ weight, corrected at settle), its rate tokens
 *  spent. The
 *  rows are locked in key order, as settle and the queue's triggers lock them. Defines "klocked". `one`:
 *  as keyedIds'. The time is read once in "klocked", not in a CASE of the update (which Citus refuses).
 *  `standby`: a standby claim's (standby.ts), whose triggers are not counted in `running` until their
 *  hand-over (settle.ts, "moved"). */
export function keyCharge(one?: SQL, standby = false): SQL {
  const at = scopeOf(one).at("k");
  return sql`
    kdq AS (SELECT tenant_id, key, count(*)::int AS n FROM dequeued WHERE key IS NOT NULL GROUP BY 1, 2),
    kgot AS (SELECT tenant_id, key, count(*)::int AS n FROM claimed WHERE key IS NOT NULL GROUP BY 1, 2),
    klocked AS MATERIALIZED (
      SELECT k.tenant_id, k.key, k.running, d.n AS dq, coalesce(g.n, 0) AS n, p.cap, p.weight, p.tokens,
             c.cost_ms, now() AS now
        FROM tenant_keys k
        JOIN kdq d ON d.tenant_id = k.tenant_id AND d.key = k.key
        LEFT JOIN kgot g ON g.tenant_id = k.tenant_id AND g.key = k.key
        JOIN cand c ON c.id = k.tenant_id
       CROSS JOIN LATERAL (${keyPolicy(sql`k`, sql`c`)}) p
       -- After the tenants' ledger rows ("charge"): tenant_pools, then tenant_keys, as settle locks them.
       WHERE (SELECT count(*) FROM charge) >= 0 ${at}
       ORDER BY k.tenant_id, k.key
         FOR UPDATE OF k
    ),
    kcharge AS (
      UPDATE tenant_keys k
         SET queued = k.queued - l.dq, ${standby ? sql`` : sql`running = k.running + l.n,`}
             vtime = k.vtime + k.vcorr + l.n * l.cost_ms / l.weight, vcorr = 0,
             rate_tokens = CASE WHEN l.tokens IS NULL OR l.n = 0 THEN k.rate_tokens ELSE l.tokens - l.n END,
             rate_updated_at = CASE WHEN l.tokens IS NULL OR l.n = 0 THEN k.rate_updated_at ELSE l.now END
        FROM klocked l
       WHERE k.tenant_id = l.tenant_id AND k.key = l.key ${at}
    )`;
}

/** Overlap skip / buffer_one, for the queue row `x`: an exclusive trigger starts only when no trigger of
 *  its job is running AND it is its job's first due exclusive trigger — otherwise one claim could start
 *  two of the same job (a run-now next to a waiting fire), both unseen by the check. `one`: the row's
 *  tenant, to read the tables at (keyedIds). */
export function exclusiveFree(x: SQL, one?: SQL): SQL {
  const { at, tenant } = scopeOf(one);
  return sql`(NOT ${x}.exclusive OR (
              NOT EXISTS (SELECT 1 FROM triggers o WHERE o.job_id = ${x}.job_id AND o.status = 'running' ${at("o")})
              AND ${x}.id = (SELECT f.id FROM trigger_queue f
                              WHERE f.tenant_id = ${tenant(sql`${x}.tenant_id`)} AND f.type = ${x}.type AND f.job_id = ${x}.job_id
                                AND f.exclusive AND f.next_attempt_at <= now()
                              ORDER BY f.priority DESC, f.next_attempt_at, f.id
                              LIMIT 1)))`;
}

/** The claim's answer about keys (claim.ts, claimResult), read from its CTEs "picked" and "klocked". */
export function keyResult(): SQL {
  return sql`,
           -- A keyed tenant's triggers: their rank in its key-slot order (keyedIds), which fairOrder()
           -- keeps within the tenant; and the keys this claim took to their cap (ClaimedTrigger.atCap).
           (SELECT json_object_agg(p.id, p.ord) FROM picked p WHERE p.keyed) AS key_ord,
           -- The capped keys this claim took work of, and whether it took them to their cap.
           (SELECT json_agg(json_build_array(l.tenant_id, l.key, l.running + l.n >= l.cap)) FROM klocked l
             WHERE l.n > 0 AND l.cap IS NOT NULL) AS key_cap`;
}

/** A capped key's triggers start among what the pool is starting now (vclock = vt: startKey() moves
 *  them to the slot in service), not behind the tenant's queued work: each fills a slot its key freed
 *  or still has, and a key slot left waiting behind the prefetch queue would idle (the key's cap is
 *  "fully used", docs/fairness.md). At most a key's cap of them are claimed at a time. */
export function capsFirst<T extends { id: string; vt: number; vclock: number | null }>(
  rows: T[],
  capped: ReadonlySet<string>,
): T[] {
  if (capped.size > 0) for (const r of rows) if (capped.has(r.id)) r.vclock = r.vt;
  return rows;
}
