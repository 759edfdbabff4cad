// The bookkeeping every drill ends with: what Postgres says happened to each trigger, and what the
// receiver says it got. "Lost" = a trigger that never reached a terminal state or was never answered
// 2xx; a "duplicate" = a delivery of a webhook-id the receiver had already seen.
import { query, sql, type Db } from "@fairway/store";
import type { Hit } from "./hook-receiver.ts";

export async function statusCounts(db: Db): Promise<Record<string, number>> {
  const rows = await query<{ status: string; n: number }>(
    db,
    sql`SELECT status, count(*)::int AS n FROM triggers GROUP BY status`,
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** Triggers an executor still holds a lease on (running, or claimed ahead and queued). */
export async function leasesHeld(db: Db, owner: string): Promise<number> {
  const [{ n }] = await query<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM triggers WHERE status = 'running' AND lease_owner = ${owner}`,
  );
  return n;
}

export interface DeliveryReport {
  expected: number;
  /** Triggers with no 2xx-answered delivery. */
  lost: number;
  deliveries: number;
  /** deliveries − distinct webhook-ids. */
  duplicates: number;
  /** Deliveries of ids that were never seeded (would mean a wrong or unstable webhook-id). */
  foreign: number;
}

export function deliveryReport(hits: Hit[], ids: string[]): DeliveryReport {
  const expected = new Set(ids);
  const seen = new Set<string>();
  const ok = new Set<string>();
  let foreign = 0;
  for (const h of hits) {
    if (!expected.has(h.id)) foreign++;
    seen.add(h.id);
    if (h.status !== null && h.status < 300) ok.add(h.id);
  }
  return {
    expected: ids.length,
    lost: ids.filter((id) => !ok.has(id)).length,
    deliveries: hits.length,
    duplicates: hits.length - seen.size,
    foreign,
  };
}

/** Attempt rows must be exactly 1..attempt_count for every trigger that has run: no gap, no double. */
export async function attemptAnomalies(db: Db): Promise<Array<{ id: string; attemptCount: number; rows: number[] }>> {
  return query(
    db,
    sql`
    SELECT t.id, t.attempt_count AS "attemptCount", coalesce(array_agg(a.attempt ORDER BY a.attempt) FILTER (WHERE a.attempt IS NOT NULL), '{}') AS rows
      FROM triggers t LEFT JOIN attempts a ON a.trigger_id = t.id
     WHERE t.status IN ('succeeded', 'dead', 'pending')
     GROUP BY t.id, t.attempt_count
    HAVING count(a.attempt) <> t.attempt_count OR count(DISTINCT a.attempt) <> count(a.attempt)
        OR coalesce(max(a.attempt), 0) <> t.attempt_count`,
  );
}

export { until } from "../../support/until.ts";
