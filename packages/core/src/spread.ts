// Spread crons (docs/schedules.md, "Spread"): a cron job with `spread` fires at each cron instant plus
// a fixed offset within the window, derived from the job's id. Thousands of jobs on "0 0 * * *" then
// fire over the window instead of in one second, and each job keeps its offset across restarts and
// edits (an edit keeps the id). Shifting every fire of a job by one constant keeps its fires strictly
// increasing and unique, so the materializer, misfire and overlap rules work on the shifted instants.
import { nextFires } from "./cron.ts";

/** The longest spread window: a day. Longer would push a daily job's fire into another day. */
const MAX_SPREAD_MS = 86_400_000;

// PnDTnHnMnS (weeks, years and months left out: their length varies). Each part optional, whole numbers
// except the seconds (milliseconds allowed).
const DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d{1,3})?)S)?)?$/;

export type ParsedSpread = { ok: true; ms: number } | { ok: false; message: string };

/** An ISO 8601 duration of days, hours, minutes and seconds, in milliseconds. */
export function parseSpread(text: string): ParsedSpread {
  const m = DURATION.exec(text);
  if (!m || text === "P" || text.endsWith("T")) {
    return {
      ok: false,
      message: `"${text}" is not an ISO 8601 duration of days, hours, minutes or seconds (e.g. "PT10M", "PT1H", "P1D")`,
    };
  }
  const [, d, h, min, s] = m;
  const ms = Math.round(
    (Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3_600 + Number(min ?? 0) * 60 + Number(s ?? 0)) * 1000,
  );
  if (ms <= 0) return { ok: false, message: `"${text}" is empty: a spread window must be longer than 0` };
  return { ok: true, ms };
}

/** Milliseconds as the shortest ISO 8601 duration naming them (hours, minutes, seconds): 3600000 → PT1H. */
export function formatSpread(ms: number): string {
  if (ms === MAX_SPREAD_MS) return "P1D";
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `PT${h ? `${h}H` : ""}${m ? `${m}M` : ""}${s ? `${s}S` : ""}`;
}

/** A stable 32-bit hash of a string: FNV-1a over its UTF-16 units, then murmur3's finaliser, so ids
 *  that differ only in their last characters land far apart. Never change it: every spread job's
 *  offset would move. */
export function stableHash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The job's offset in [0, spreadMs), whole milliseconds, from its id alone. */
export function spreadOffsetMs(jobId: string, spreadMs: number | null | undefined): number {
  if (!spreadMs || spreadMs <= 0) return 0;
  return Math.floor((stableHash32(jobId) / 2 ** 32) * spreadMs);
}

/** The next `count` fires strictly after `after` of a cron shifted by `offsetMs`: each cron instant
 *  plus the offset. */
export function nextShiftedFires(expr: string, timezone: string, after: Date, count: number, offsetMs: number): Date[] {
  if (offsetMs === 0) return nextFires(expr, timezone, after, count);
  return nextFires(expr, timezone, new Date(after.getTime() - offsetMs), count).map(
    (d) => new Date(d.getTime() + offsetMs),
  );
}

/** The widest spread a cron allows: a day, and no more than the shortest gap between its next 50 fires
 *  after `from` (a window longer than the period would move one period's fire past the next one's). */
export function maxSpreadMs(expr: string, timezone: string, from: Date): number {
  const fires = nextFires(expr, timezone, from, 50);
  let max = MAX_SPREAD_MS;
  for (let i = 1; i < fires.length; i++) max = Math.min(max, fires[i].getTime() - fires[i - 1].getTime());
  return max;
}
