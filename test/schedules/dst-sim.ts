// The 48-hour DST simulation: three executors — three separate Postgres connections — run the
// materializer concurrently while a simulated clock steps through 48 hours around a zone's transition.
// The materializer takes `now` as an argument (the database's own now() plays no part in its due
// check), so real Postgres runs 48 simulated hours in seconds.
import { expect } from "vitest";
import { connectPostgres, materialize, query, sql } from "@fairway/store";
import { createHarness, iso } from "./harness.ts";

const HOUR = 3_600_000;
const MIN = 60_000;
/** Executors poll far more often than this; fires are materialized this far ahead, so none is late. */
const LOOKAHEAD_MS = 5 * MIN;

export interface SimResult {
  /** Fire instants per cron expression, ISO, in order, inside [start, start + 48 h). */
  fires: Record<string, string[]>;
  /** Rows with status skipped, over all jobs. */
  skipped: number;
  /** Fires planned by the three executors together (must equal the rows: no fire planned twice). */
  planned: number;
  rows: number;
  /** Which executors did any work (racing is real only if more than one did). */
  busyExecutors: number;
}

/** Deterministic PRNG for step sizes, so a failure replays exactly. */
function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function simulate48h(timezone: string, startIso: string, crons: string[], seed = 1): Promise<SimResult> {
  const start = Date.parse(startIso);
  const end = start + 48 * HOUR;
  const h = await createHarness({ start });
  const executors = [0, 1, 2].map(() => connectPostgres(h.tdb.url, { max: 2 }));
  try {
    const key = await h.tenant("dst");
    const jobIds = new Map<string, string>();
    for (const cron of crons) {
      const res = await h.call(key, "POST", "/v1/jobs", {
        name: `dst ${cron}`,
        schedule: { cron, timezone },
        target: { url: "http://127.0.0.1:9/never-called" },
      });
      expect(res.status, JSON.stringify(res.json)).toBe(201);
      jobIds.set(cron, res.json.id);
    }

    const rand = mulberry32(seed);
    let planned = 0;
    const busy = new Set<number>();
    for (let now = start; now < end; now += 2 * MIN + Math.floor(rand() * 3 * MIN)) {
      // Up to 2 s of clock skew between executors, as between real machines.
      const results = await Promise.all(
        executors.map((e, i) =>
          materialize(e.db, new Date(now + Math.floor(rand() * 2000)), LOOKAHEAD_MS).then((r) => [i, r] as const),
        ),
      );
      for (const [i, r] of results) {
        planned += r.fired + r.skipped;
        if (r.jobs > 0) busy.add(i);
      }
    }

    const fires: Record<string, string[]> = {};
    for (const [cron, id] of jobIds) {
      const rows = await query<{ at: string }>(
        h.db,
        sql`SELECT scheduled_for AS at FROM triggers WHERE job_id = ${id} AND status = 'pending' ORDER BY scheduled_for`,
      );
      fires[cron] = rows.map((r) => iso(new Date(r.at))).filter((a) => Date.parse(a) < end);
    }
    const [counts] = await query<{ rows: number; skipped: number; distinct: number }>(
      h.db,
      sql`SELECT count(*)::int AS rows, count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
                 count(DISTINCT (job_id, scheduled_for))::int AS distinct FROM triggers`,
    );
    expect(counts.distinct, "at most one trigger per (job, instant)").toBe(counts.rows);
    return { fires, skipped: counts.skipped, planned, rows: counts.rows, busyExecutors: busy.size };
  } finally {
    await Promise.all(executors.map((e) => e.close()));
    await h.close();
  }
}

/** Every `stepMs` from the first instant at or after `from` (aligned to `alignMs` past the UTC hour), before `to`. */
export function every(fromIso: string, toIso: string, stepMs: number, alignMs = 0): string[] {
  const out: string[] = [];
  const from = Date.parse(fromIso);
  let t = Math.ceil((from - alignMs) / stepMs) * stepMs + alignMs;
  for (; t < Date.parse(toIso); t += stepMs) if (t > from) out.push(iso(t));
  return out;
}
