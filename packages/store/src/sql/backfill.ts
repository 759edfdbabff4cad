// Backfills of cron jobs (docs/flow-control.md, "Backfill"): the fires of a past range written as
// triggers of kind 'backfill', carrying the backfill's id, listed and cancelled as one.
//
// Behind live work without touching the claim: a backfill trigger's priority is BACKFILL_PRIORITY,
// below any priority a job can have, and the claim takes a tenant's (and a key's) due rows highest
// priority first, then by due time; the executor starts what a claim took in that order too. So a
// tenant's live fires due at the same time go first, while its backfill is still charged to it like
// any work and shares the pool with other tenants by the fair claim. The due times step by a
// microsecond per fire, so a backfill runs oldest fire first.
import { newId } from "@fairway/core";
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { backfills } from "../schema.ts";
import { rowShape } from "./columns.ts";

/** Below the API's job priorities (-100..100): a backfill's triggers. */
const BACKFILL_PRIORITY = -1000;

type BackfillRow = typeof backfills.$inferSelect;

/** A backfill with its triggers counted by status (pending, running, succeeded, dead, unknown,
 *  cancelled, skipped). */
export type BackfillInfo = BackfillRow & { counts: Record<string, number> };

const shape = rowShape<BackfillRow>(backfills, "b");

/** A backfill's triggers counted by status, of tenant `tenantId`: named, the read goes to the tenant's
 *  shard alone on a Citus cluster. */
const withCounts = (tenantId: string) => sql`coalesce((SELECT json_object_agg(s.status, s.n) FROM
      (SELECT t.status, count(*)::int AS n FROM triggers t WHERE t.tenant_id = ${tenantId} AND t.backfill_id = b.id GROUP BY t.status) s), '{}')`;

function infoRows(raw: Record<string, unknown>[]): BackfillInfo[] {
  const rows = shape.rows(raw);
  return rows.map((r, i) => {
    const counts = raw[i].counts;
    return { ...r, counts: (typeof counts === "string" ? JSON.parse(counts) : counts) as Record<string, number> };
  });
}

export interface NewBackfill {
  tenantId: string;
  jobId: string;
  from: Date;
  to: Date;
  overlap: "skip" | "allow";
  /** The fires in [from, to), oldest first. */
  fires: Date[];
}

/** Writes the backfill and its triggers in one statement, or nothing when the job is not an active
 *  cron job of the tenant (null). With overlap "skip", a fire is left out when the job already has a
 *  trigger at that instant that ran, runs or will run (any status but skipped and cancelled). The job
 *  row is share-locked first, so a pause or cancel either waits for the backfill (and then cancels its
 *  pending triggers) or is seen as the job not being active. */
export async function createBackfill(db: Db, b: NewBackfill): Promise<BackfillInfo | null> {
  const id = newId("bf");
  const fires = JSON.stringify(b.fires.map((at) => [at.toISOString(), newId("trg")]));
  const raw = await query(
    db,
    sql`
    WITH j AS MATERIALIZED (
      SELECT id, tenant_id, type, overlap, max_attempts, key FROM jobs
       WHERE id = ${b.jobId} AND tenant_id = ${b.tenantId} AND status = 'active' AND cron IS NOT NULL
         FOR SHARE
    ), fires AS (
      SELECT (f.value ->> 0)::timestamptz AS at, f.value ->> 1 AS trigger_id, f.ord
        FROM jsonb_array_elements(${fires}::jsonb) WITH ORDINALITY AS f(value, ord)
       WHERE EXISTS (SELECT 1 FROM j)
    ), todo AS MATERIALIZED (
      SELECT f.* FROM fires f
       WHERE ${b.overlap} = 'allow'
          OR NOT EXISTS (SELECT 1 FROM triggers t WHERE t.job_id = ${b.jobId} AND t.scheduled_for = f.at
                            AND t.status NOT IN ('skipped', 'cancelled'))
    ), bf AS (
      INSERT INTO backfills AS b (id, tenant_id, job_id, from_at, to_at, overlap, fires, skipped)
      SELECT ${id}, j.tenant_id, j.id, ${b.from.toISOString()}::timestamptz, ${b.to.toISOString()}::timestamptz,
             ${b.overlap}, ${b.fires.length}::int, ${b.fires.length}::int - (SELECT count(*)::int FROM todo)
        FROM j
      RETURNING ${shape.list}
    ), ins AS (
      INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, priority, exclusive,
                            max_attempts, key, backfill_id)
      SELECT f.trigger_id, j.tenant_id, j.id, j.type, 'backfill', f.at,
             now() + f.ord * interval '1 microsecond', ${BACKFILL_PRIORITY}::int, j.overlap <> 'allow',
             j.max_attempts, j.key, ${id}
        FROM todo f CROSS JOIN j
       WHERE EXISTS (SELECT 1 FROM bf)
      RETURNING status
    )
    SELECT bf.*, (SELECT json_build_object('pending', count(*)::int) FROM ins) AS counts FROM bf`,
  );
  return infoRows(raw)[0] ?? null;
}

export async function getBackfill(db: Db, tenantId: string, id: string): Promise<BackfillInfo | null> {
  const raw = await query(
    db,
    sql`SELECT ${shape.list}, ${withCounts(tenantId)} AS counts FROM backfills b WHERE b.id = ${id} AND b.tenant_id = ${tenantId}`,
  );
  return infoRows(raw)[0] ?? null;
}

/** A job's backfills, newest first; `after` is the previous page's last id. */
export async function listBackfills(
  db: Db,
  tenantId: string,
  jobId: string,
  after: string | null,
  limit: number,
): Promise<BackfillInfo[]> {
  const raw = await query(
    db,
    sql`SELECT ${shape.list}, ${withCounts(tenantId)} AS counts FROM backfills b
         WHERE b.job_id = ${jobId} AND b.tenant_id = ${tenantId} AND (${after}::text IS NULL OR b.id < ${after})
         ORDER BY b.id DESC LIMIT ${limit}`,
  );
  return infoRows(raw);
}

/** Cancels the backfill's triggers not yet claimed (reason backfill_cancelled); running ones finish.
 *  Idempotent. The job row is share-locked first, as a pause or cancel of the job locks it before its
 *  triggers, so the two never wait on each other's trigger rows in opposite orders. A claim locks
 *  trigger rows SKIP LOCKED: what it claimed first runs, the rest are cancelled here. Null when the
 *  backfill is not the tenant's; `cancelledNow` is how many this call cancelled. */
export async function cancelBackfill(
  db: Db,
  tenantId: string,
  id: string,
): Promise<(BackfillInfo & { cancelledNow: number }) | null> {
  return db.transaction(async (tx) => {
    const [found] = await query<{ job_id: string }>(
      tx,
      sql`SELECT job_id FROM backfills WHERE id = ${id} AND tenant_id = ${tenantId}`,
    );
    if (!found) return null;
    await query(tx, sql`SELECT 1 FROM jobs WHERE id = ${found.job_id} FOR SHARE`);
    const [n] = await query<{ n: number }>(
      tx,
      sql`WITH b AS (UPDATE backfills SET cancelled_at = coalesce(cancelled_at, now()) WHERE id = ${id} RETURNING id),
               c AS (UPDATE triggers SET status = 'cancelled', reason = 'backfill_cancelled', finished_at = now(),
                            updated_at = now()
                      WHERE backfill_id = (SELECT id FROM b) AND status = 'pending'
                     RETURNING 1)
          SELECT count(*)::int AS n FROM c`,
    );
    const info = await getBackfill(tx, tenantId, id);
    return info && { ...info, cancelledNow: n.n };
  });
}
