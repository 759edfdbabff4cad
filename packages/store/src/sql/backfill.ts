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

/** A backfill with its triggers counted by status (pending, standby, running, succeeded, dead, unknown,
 *  cancelled, skipped). */
export type BackfillInfo = BackfillRow & { counts: Record<string, number> };

const shape = rowShape<BackfillRow>(backfills, "b");

/** A backfill's triggers counted by status, of tenant `tenantId`: named, the read goes to the tenant's
 *  shard alone on a Citus cluster. A trigger claimed on standby (sql/standby.ts) is leased but waits for
 *  a slot under the cap: it counts as `standby`, so `running` never exceeds what runs. */
const withCounts = (tenantId: string) => sql`coalesce((SELECT json_object_agg(s.status, s.n) FROM
      (SELECT CASE WHEN t.status = 'running' AND t.standby THEN 'standby' ELSE t.status END AS status, count(*)::int AS n
         FROM triggers t WHERE t.tenant_id = ${tenantId} AND t.backfill_id = b.id GROUP BY 1) s), '{}')`;

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

/** Writes the backfill and its triggers in one transaction, or nothing when the job is not an active
 *  cron job of the tenant (null). With overlap "skip", a fire is left out when the job already has a
 *  trigger at that instant that ran, runs or will run (any status but skipped and cancelled). The job
 *  row is share-locked first, so a pause or cancel either waits for the backfill (and then cancels its
 *  pending triggers) or is seen as the job not being active. Every statement names the tenant, so that
 *  on a Citus cluster the transaction runs on its shard group alone (docs/scaling.md); the triggers'
 *  INSERT reads its tenant_id from the job row, which Citus pushes down to the shard. */
export async function createBackfill(db: Db, b: NewBackfill): Promise<BackfillInfo | null> {
  const id = newId("bf");
  const fires = b.fires.map((at, i) => ({ at: at.toISOString(), trigger_id: newId("trg"), ord: i + 1 }));
  return db.transaction(async (tx) => {
    const [job] = await query(
      tx,
      sql`SELECT id FROM jobs
           WHERE tenant_id = ${b.tenantId} AND id = ${b.jobId} AND status = 'active' AND cron IS NOT NULL
             FOR SHARE`,
    );
    if (!job) return null;
    const taken =
      b.overlap === "allow"
        ? new Set<number>()
        : new Set(
            (
              await query<{ ms: number }>(
                tx,
                sql`SELECT (extract(epoch FROM t.scheduled_for) * 1000)::float8 AS ms FROM triggers t
                     WHERE t.tenant_id = ${b.tenantId} AND t.job_id = ${b.jobId}
                       AND t.scheduled_for IN (SELECT jsonb_array_elements_text(${JSON.stringify(fires.map((f) => f.at))}::jsonb)::timestamptz)
                       AND t.status NOT IN ('skipped', 'cancelled')`,
              )
            ).map((r) => Number(r.ms)),
          );
    const todo = fires.filter((f) => !taken.has(Date.parse(f.at)));
    const raw = await query(
      tx,
      sql`INSERT INTO backfills AS b (id, tenant_id, job_id, from_at, to_at, overlap, fires, skipped)
          VALUES (${id}, ${b.tenantId}, ${b.jobId}, ${b.from.toISOString()}::timestamptz, ${b.to.toISOString()}::timestamptz,
                  ${b.overlap}, ${b.fires.length}::int, ${b.fires.length - todo.length}::int)
          RETURNING ${shape.list}`,
    );
    if (todo.length > 0) {
      await query(
        tx,
        sql`INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, priority, exclusive,
                                  max_attempts, key, backfill_id)
            SELECT f.trigger_id, j.tenant_id, j.id, j.type, 'backfill', f.at,
                   f.now + f.ord * interval '1 microsecond', ${BACKFILL_PRIORITY}::int, j.overlap <> 'allow',
                   j.max_attempts, j.key, ${id}
              FROM jobs j
              CROSS JOIN (SELECT x.*, now() AS now
                            FROM jsonb_to_recordset(${JSON.stringify(todo)}::jsonb) AS x(at timestamptz, trigger_id text, ord int)) f
             WHERE j.tenant_id = ${b.tenantId} AND j.id = ${b.jobId}`,
      );
    }
    const [row] = shape.rows(raw);
    return row ? { ...row, counts: { pending: todo.length } } : null;
  });
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
    await query(tx, sql`SELECT 1 FROM jobs WHERE tenant_id = ${tenantId} AND id = ${found.job_id} FOR SHARE`);
    // now() read in FROM: Citus takes none inside a COALESCE of a distributed UPDATE.
    const [n] = await query<{ n: number }>(
      tx,
      sql`WITH b AS (UPDATE backfills b SET cancelled_at = coalesce(b.cancelled_at, x.now) FROM (SELECT now() AS now) x
                      WHERE b.tenant_id = ${tenantId} AND b.id = ${id} RETURNING b.id),
               c AS (UPDATE triggers SET status = 'cancelled', reason = 'backfill_cancelled', finished_at = now(),
                            updated_at = now()
                      WHERE tenant_id = ${tenantId} AND backfill_id = (SELECT id FROM b) AND status = 'pending'
                     RETURNING 1)
          SELECT count(*)::int AS n FROM c`,
    );
    const info = await getBackfill(tx, tenantId, id);
    return info && { ...info, cancelledNow: n.n };
  });
}
