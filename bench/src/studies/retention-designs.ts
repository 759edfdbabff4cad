// Retention designs side by side: the time to delete the same expired history (the
// retention-under-load scenario's seed, each arm on its own copy) with the batch that starts from
// the first job every time ("rescan", the first design) and the batch that starts where the last one
// ended ("cursor", store retention.ts), and how each batch's time grows as the pass goes on.
// Prints one JSON line per arm. `[EXPIRED=1000000] [ONE_TIME=100000] [PAIRS=1] [ARMS=rescan,cursor]`.
import {
  deleteExpiredJobs,
  deleteExpiredTriggers,
  query,
  sql,
  type Db,
  type RetentionBatch,
  type RetentionCursor,
} from "@fairway/store";
import { percentile } from "../lib/stats.ts";
import { copyOf, expiredLeft, seeded, type Size } from "../scenarios/retention.ts";

const FINISHED = sql`('succeeded', 'skipped', 'cancelled', 'unknown')`;

/** The first design's trigger batch: candidates from the first job on, every time. */
async function rescanTriggers(db: Db, now: Date, batch: number): Promise<number> {
  const at = now.toISOString();
  const rows = await query<{ found: number }>(
    db,
    sql`
    WITH cand AS MATERIALIZED (
      SELECT x.id
        FROM tenants tn
        JOIN jobs j ON j.tenant_id = tn.id
        CROSS JOIN LATERAL (
          SELECT x.id, x.status, coalesce(x.finished_at, x.updated_at) AS done_at FROM triggers x
           WHERE x.job_id = j.id
             AND x.scheduled_for < ${at}::timestamptz - make_interval(days => least(tn.history_retention_days, tn.dead_retention_days))
        ) x
       WHERE (x.status IN ${FINISHED} AND x.done_at < ${at}::timestamptz - make_interval(days => tn.history_retention_days))
          OR (x.status = 'dead' AND x.done_at < ${at}::timestamptz - make_interval(days => tn.dead_retention_days))
       LIMIT ${batch}
    ),
    locked AS (SELECT t.id FROM triggers t WHERE t.id = ANY (ARRAY(SELECT id FROM cand)) FOR UPDATE SKIP LOCKED),
    del AS (DELETE FROM triggers t WHERE t.id = ANY (ARRAY(SELECT id FROM locked))
               AND (t.status IN ${FINISHED} OR t.status = 'dead') RETURNING t.id),
    att AS (DELETE FROM attempt_log a WHERE a.trigger_id = ANY (ARRAY(SELECT id FROM del)))
    SELECT (SELECT count(*)::int FROM cand) AS found`,
  );
  return rows[0].found;
}

async function rescanJobs(db: Db, now: Date, batch: number): Promise<number> {
  const rows = await query<{ id: string }>(
    db,
    sql`
    DELETE FROM jobs j WHERE j.id = ANY (ARRAY(
       SELECT x.id FROM jobs x JOIN tenants tn ON tn.id = x.tenant_id
        WHERE x.cron IS NULL AND x.status IN ('completed', 'cancelled')
          AND x.updated_at < ${now.toISOString()}::timestamptz - make_interval(days => tn.history_retention_days)
          AND NOT EXISTS (SELECT 1 FROM triggers t WHERE t.job_id = x.id)
        LIMIT ${batch} FOR UPDATE OF x SKIP LOCKED))
    RETURNING j.id`,
  );
  return rows.length;
}

const BATCH = 1000;
const PAUSE_MS = 20;

/** Batch times (ms) of one full pass. */
async function rescanPass(db: Db): Promise<number[]> {
  const times: number[] = [];
  for (const del of [rescanTriggers, rescanJobs]) {
    for (;;) {
      const t0 = performance.now();
      const found = await del(db, new Date(), BATCH);
      times.push(performance.now() - t0);
      if (found < BATCH) break;
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
  }
  return times;
}

/** The production batches (store retention.ts) in the production loop's order (executor retention.ts). */
async function cursorPass(db: Db): Promise<number[]> {
  const times: number[] = [];
  for (const del of [deleteExpiredTriggers, deleteExpiredJobs]) {
    let after: RetentionCursor | null = null;
    for (;;) {
      const t0 = performance.now();
      const n: RetentionBatch = await del(db, new Date(), BATCH, after);
      times.push(performance.now() - t0);
      after = n.next;
      if (n.found < BATCH) break;
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
  }
  return times;
}

const size: Size = {
  expired: Number(process.env.EXPIRED ?? 1_000_000),
  oneTime: Number(process.env.ONE_TIME ?? 100_000),
  due: 0,
};
const arms = (process.env.ARMS ?? "rescan,cursor").split(",");
const template = await seeded({ quick: false, run: 0, shared: new Map(), log: (m) => console.error(m) }, size);
try {
  for (let p = 0; p < Number(process.env.PAIRS ?? 1); p++) {
    for (const name of p % 2 === 0 ? arms : [...arms].reverse()) {
      const tdb = await copyOf(template, 2);
      try {
        const t0 = performance.now();
        const times = name === "rescan" ? await rescanPass(tdb.store.db) : await cursorPass(tdb.store.db);
        const s = (performance.now() - t0) / 1000;
        const left = await expiredLeft(tdb.store.db);
        const tenth = Math.max(1, Math.floor(times.length / 10));
        const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
        console.log(
          JSON.stringify({
            arm: name,
            expired: size.expired,
            left,
            seconds: Math.round(s * 10) / 10,
            batches: times.length,
            batch_ms_p50: Math.round(percentile(times, 50) * 10) / 10,
            batch_ms_p99: Math.round(percentile(times, 99) * 10) / 10,
            batch_ms_first_tenth: Math.round(mean(times.slice(0, tenth)) * 10) / 10,
            batch_ms_last_tenth: Math.round(mean(times.slice(-tenth)) * 10) / 10,
            at: new Date().toISOString(),
          }),
        );
      } finally {
        await tdb.drop();
      }
    }
  }
} finally {
  await template.drop();
}
process.exit(0);
