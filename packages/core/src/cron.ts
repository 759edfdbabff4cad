// Strict cron with IANA time zones and documented DST behaviour.
// We iterate local wall-clock days ourselves (cron-parser only expands fields) because no library gives
// exactly the Vixie-cron DST rules below, and the materializer must be able to explain every fire.
import { type CompiledCron, compileFields, dayMatches, nextTimeOfDay, splitFields } from "./cron-fields.ts";
import { findTransition, offsetAt, validateTimezone } from "./tz.ts";
import { BoundedMap } from "./bounded-map.ts";

export { validateTimezone };

/** README-ready description of how schedules behave around daylight-saving changes. */
export const CRON_DST_RULES = `Cron schedules are evaluated on the wall clock of the job's IANA timezone (Vixie-cron style):
- Spring forward (a wall-clock time that does not exist that day): a job with a fixed hour fires once,
  at the first instant after the gap (30 2 * * * in America/New_York on 2025-03-09 fires at 03:00 EDT).
  Several skipped times collapse into that single fire. Jobs whose hour field is * or */n are
  interval-like: they have no fires in the missing hour and no catch-up fire.
- Fall back (a wall-clock time that happens twice): a job with a fixed hour fires only at the first
  occurrence (30 1 * * * fires once at 01:30 EDT). Interval-like jobs fire at both occurrences.
- Day-of-month and day-of-week: if both are restricted (neither starts with *), either may match.
- Fires are returned in strictly increasing order and never repeat an instant.`;

export type ParsedCron = { ok: true; expr: string; hasSeconds: boolean } | { ok: false; message: string };

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Feb 29 recurs at most 8 years apart (2096 → 2104); searching a bit longer finds every real fire. */
const HORIZON_DAYS = 8 * 366 + 2;

const cache = new BoundedMap<string, CompiledCron | string>(1000); // expressions come from tenants

function compile(expr: string): { compiled: CompiledCron; hasSeconds: boolean; normalized: string } | string {
  const split = splitFields(expr);
  if (typeof split === "string") return split;
  const key = split.fields.join(" ");
  const compiled = cache.getOrSet(key, () => compileFields(split.fields));
  if (typeof compiled === "string") return compiled;
  const trimmed = expr.trim();
  const normalized = trimmed.startsWith("@") ? trimmed.toLowerCase() : trimmed.split(/\s+/).join(" ");
  return { compiled, hasSeconds: split.hasSeconds, normalized };
}

/** Strict validation for the API: 5 or 6 fields or an alias, in range, and able to fire. */
export function parseCron(expr: string): ParsedCron {
  if (typeof expr !== "string") return { ok: false, message: "cron expression must be a string" };
  const c = compile(expr);
  if (typeof c === "string") return { ok: false, message: c };
  const start = Math.floor(Date.UTC(new Date().getUTCFullYear(), 0, 1) / DAY_MS);
  for (let day = start; day < start + HORIZON_DAYS; day++) {
    if (dayMatches(c.compiled, day)) return { ok: true, expr: c.normalized, hasSeconds: c.hasSeconds };
  }
  return {
    ok: false,
    message: `cron expression "${expr.trim()}" can never fire: no date matches its day-of-month, month and day-of-week fields (e.g. February 30)`,
  };
}

/** What a walk over fires may still spend: local days visited. When it runs out the walk stops early
 *  and says where to resume, so a sparse cron over a long range is walked in bounded slices. */
export interface FireBudget {
  days: number;
  /** Set when the walk stopped for its days, not its count: the instant to resume after. */
  resumeAfter?: Date;
}

/**
 * The next `count` fire instants strictly after `after`, in UTC, following CRON_DST_RULES. At most
 * HORIZON_DAYS days are visited (a cron that has not fired by then never does), and no more than
 * `budget` holds, if given (then budget.resumeAfter is set). Days whose fires all lie after `untilMs`
 * are not visited.
 * Throws for an invalid expression or zone: callers validate with parseCron/validateTimezone first.
 */
export function nextFires(
  expr: string,
  timezone: string,
  after: Date,
  count: number,
  budget?: FireBudget,
  untilMs = Number.POSITIVE_INFINITY,
): Date[] {
  const c = compile(expr);
  if (typeof c === "string") throw new TypeError(`invalid cron expression: ${c}`);
  if (!validateTimezone(timezone)) throw new RangeError(`invalid timezone: ${timezone}`);
  const cron = c.compiled;
  const out: Date[] = [];
  if (count <= 0 || Number.isNaN(after.getTime())) return out;

  let last = after.getTime();
  const lowerBound = Math.floor(last / 1000) * 1000 + 1000; // cron resolution is one second
  const emit = (instant: number): boolean => {
    if (instant >= lowerBound && instant > last) {
      out.push(new Date(instant));
      last = instant;
    }
    return out.length >= count;
  };

  // Start one local day early: after a fall-back at midnight, instants after `after` can still
  // belong to the previous wall-clock day.
  const firstDay = Math.floor((lowerBound + offsetAt(timezone, lowerBound)) / DAY_MS) - 1;
  // A local day's instants lie within 15 hours of its UTC span (emitDay), so one day past is enough.
  const lastDay = Math.min(firstDay + HORIZON_DAYS, Math.floor(untilMs / DAY_MS) + 1);
  for (let day = firstDay; day <= lastDay && out.length < count; day++) {
    if (budget && budget.days-- <= 0) {
      // Every instant of local day `day` or later is after day·24h − 14h (offsets are at most +14h).
      budget.resumeAfter = new Date(Math.max(last, day * DAY_MS - 15 * HOUR_MS));
      break;
    }
    if (!dayMatches(cron, day)) continue;
    emitDay(cron, timezone, day, Math.max(lowerBound, last + 1), emit);
  }
  return out;
}

/** Fires in (afterExclusive, untilInclusive], at most `limit`, within `budget` if given (when it runs
 *  out first, budget.resumeAfter says where to go on). */
export function firesBetween(
  expr: string,
  timezone: string,
  afterExclusive: Date,
  untilInclusive: Date,
  limit: number,
  budget?: FireBudget,
): Date[] {
  const out: Date[] = [];
  let cursor = afterExclusive;
  const until = untilInclusive.getTime();
  while (out.length < limit) {
    const batch = nextFires(expr, timezone, cursor, Math.min(limit - out.length, 256), budget, until);
    for (const d of batch) {
      if (d.getTime() > until) return out;
      out.push(d);
    }
    if (batch.length === 0 || budget?.resumeAfter) return out;
    cursor = batch[batch.length - 1];
  }
  return out;
}

/**
 * Emits one local day's fires in order. Walls are ms since epoch of the wall-clock time read as UTC.
 * A day window holds at most one transition T (offset oA before, oB after).
 */
function emitDay(c: CompiledCron, tz: string, day: number, lowerBound: number, emit: (t: number) => boolean): void {
  const u0 = day * DAY_MS;
  const u1 = u0 + DAY_MS;
  // Any instant whose wall time falls on this day lies within [u0 - 14h, u1 + 12h].
  const lo = u0 - 15 * HOUR_MS;
  const hi = u1 + 15 * HOUR_MS;
  const oA = offsetAt(tz, lo);
  const oB = offsetAt(tz, hi);

  // Emits matching walls in [from, to) mapped with offset o; true when `count` is reached.
  const range = (from: number, to: number, o: number): boolean => {
    let w = Math.max(from, lowerBound + o);
    w = Math.ceil(w / 1000) * 1000;
    while (w < to) {
      const sod = nextTimeOfDay(c, (w - u0) / 1000);
      if (sod < 0) return false;
      w = u0 + sod * 1000;
      if (w >= to) return false;
      if (emit(w - o)) return true;
      w += 1000;
    }
    return false;
  };

  if (oA === oB) {
    range(u0, u1, oA);
    return;
  }
  const T = findTransition(tz, lo, hi);
  if (range(u0, Math.min(u1, T + oA), oA)) return;
  if (oB > oA && !c.intervalLike) {
    // Spring forward: walls [T+oA, T+oB) do not exist; any match there fires once, at T.
    const gapFrom = Math.max(u0, T + oA);
    const gapTo = Math.min(u1, T + oB);
    if (gapFrom < gapTo) {
      const sod = nextTimeOfDay(c, Math.ceil((gapFrom - u0) / 1000));
      if (sod >= 0 && u0 + sod * 1000 < gapTo && emit(T)) return;
    }
  }
  // Fall back: walls [T+oB, T+oA) repeat; fixed-hour jobs already fired at the first occurrence.
  const secondFrom = oB < oA && !c.intervalLike ? T + oA : T + oB;
  range(Math.max(u0, secondFrom), u1, oB);
}
