// The claim's queue, the pools' running counts and the dead letters against the triggers they mirror
// (schema.ts: triggerQueue, tenant_pools.running, deadLetters): what every race and fault test can
// assert after the fact.
import { query, sql, type Db } from "@fairway/store";

export interface QueueDrift {
  /** Queue rows with no pending trigger of the same due time, priority, type and tenant. */
  stray: number;
  /** Pending triggers with no queue row. */
  missing: number;
  /** tenant_pools.running minus the running triggers not on standby, summed over the (tenant, pool)
   *  pairs that differ. */
  miscounted: number;
  /** Dead triggers without a dead letter, and dead letters of triggers that are not dead. */
  unlisted: number;
  /** tenant_keys.queued and .running against the keyed queue rows and running keyed triggers (not on
   *  standby), summed over the keys that differ. */
  keys: number;
}

export async function queueDrift(db: Db): Promise<QueueDrift> {
  const [r] = await query<QueueDrift>(
    db,
    sql`SELECT
      (SELECT count(*)::int FROM trigger_queue q WHERE NOT EXISTS (
         SELECT 1 FROM triggers t WHERE t.id = q.id AND t.status = 'pending' AND t.next_attempt_at = q.next_attempt_at
            AND t.priority = q.priority AND t.type = q.type AND t.tenant_id = q.tenant_id
            AND t.job_id = q.job_id AND t.exclusive = q.exclusive AND t.key IS NOT DISTINCT FROM q.key)) AS stray,
      (SELECT count(*)::int FROM triggers t WHERE t.status = 'pending'
          AND NOT EXISTS (SELECT 1 FROM trigger_queue q WHERE q.tenant_id = t.tenant_id AND q.id = t.id)) AS missing,
      (SELECT coalesce(sum(abs(coalesce(p.running, 0) - coalesce(r.n, 0))), 0)::int
         FROM tenant_pools p
         FULL JOIN (SELECT tenant_id, type, count(*)::int AS n FROM triggers WHERE status = 'running' AND NOT standby GROUP BY 1, 2) r
           ON r.tenant_id = p.tenant_id AND r.type = p.type) AS miscounted,
      (SELECT count(*)::int FROM triggers t FULL JOIN dead_letters l ON l.trigger_id = t.id AND l.tenant_id = t.tenant_id
        WHERE (t.status = 'dead') IS DISTINCT FROM (l.trigger_id IS NOT NULL)) AS unlisted,
      (SELECT coalesce(sum(abs(coalesce(k.queued, 0) - coalesce(q.n, 0)) + abs(coalesce(k.running, 0) - coalesce(r.n, 0))), 0)::int
         FROM tenant_keys k
         FULL JOIN (SELECT tenant_id, key, count(*)::int AS n FROM trigger_queue WHERE key IS NOT NULL GROUP BY 1, 2) q
           ON q.tenant_id = k.tenant_id AND q.key = k.key
         FULL JOIN (SELECT tenant_id, key, count(*)::int AS n FROM triggers
                     WHERE key IS NOT NULL AND status = 'running' AND NOT standby GROUP BY 1, 2) r
           ON r.tenant_id = coalesce(k.tenant_id, q.tenant_id) AND r.key = coalesce(k.key, q.key)) AS keys`,
  );
  return r;
}

export const NO_DRIFT: QueueDrift = { stray: 0, missing: 0, miscounted: 0, unlisted: 0, keys: 0 };
