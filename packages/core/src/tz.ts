// UTC-offset lookup for IANA zones using only Intl (works in Node and Workers, no tz database bundled).
import { BoundedMap } from "./bounded-map.ts";

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    // Constructing a DateTimeFormat is expensive and offset lookups happen per cron day: cache per zone.
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(tz, f);
  }
  return f;
}

/** True for a zone Intl knows (IANA names, also "UTC"). Empty or unknown → false. */
export function validateTimezone(tz: string): boolean {
  if (typeof tz !== "string" || tz.trim() === "") return false;
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

const offsets = new Map<string, BoundedMap<number, number>>(); // zones are validated IANA names

/** Offset (wall clock − UTC) in ms at the given instant, whole seconds. Memoized per zone: the
 *  materializer asks for the same few instants (the bounds of the day being planned) for every job in
 *  a zone, and formatToParts is the materializer's dominant cost. */
export function offsetAt(tz: string, instantMs: number): number {
  const t = Math.floor(instantMs / 1000) * 1000;
  let memo = offsets.get(tz);
  if (!memo) offsets.set(tz, (memo = new BoundedMap(4096))); // instants move on
  return memo.getOrSet(t, () => computeOffset(tz, t));
}

function computeOffset(tz: string, t: number): number {
  const p: Record<string, string> = {};
  for (const part of formatter(tz).formatToParts(new Date(t))) p[part.type] = part.value;
  let year = Number(p.year);
  if (p.era === "BC" || p.era === "B") year = 1 - year;
  const wall = new Date(0);
  wall.setUTCFullYear(year, Number(p.month) - 1, Number(p.day));
  wall.setUTCHours(Number(p.hour), Number(p.minute), Number(p.second), 0);
  return wall.getTime() - t;
}

/**
 * First instant (whole second) in (lo, hi] whose offset differs from offset(lo).
 * Assumes exactly one transition in the window (true for real zones over a few days).
 */
export function findTransition(tz: string, lo: number, hi: number): number {
  const before = offsetAt(tz, lo);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (offsetAt(tz, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}
