// Property test around DST transitions: nextFires against a brute-force oracle written straight from
// the documented rules (docs/schedules.md), minute by minute, with its own Intl offset lookup; croner
// (an independent implementation) is compared too, and every difference from it must fall on a
// transition day — i.e. be one of the documented rules, which the oracle then confirms.
import { Cron } from "croner";
import fc from "fast-check";
import { expect, test } from "vitest";
import { firesBetween } from "../../packages/core/src/cron.ts";

const MIN = 60_000;
const DAY = 86_400_000;
const ZONES = [
  "America/New_York",
  "Europe/Berlin",
  "Australia/Sydney",
  "Asia/Kolkata",
  "Australia/Lord_Howe",
  "Pacific/Auckland",
  "America/Santiago",
];

const fmts = new Map<string, Intl.DateTimeFormat>();
function offset(tz: string, ms: number): number {
  let f = fmts.get(tz);
  if (!f)
    fmts.set(
      tz,
      (f = new Intl.DateTimeFormat("en-US", {
        timeZone: tz,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
      })),
    );
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, Number(x.value)]));
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) - Math.floor(ms / MIN) * MIN;
}

function values(field: string, max: number): Set<number> {
  const out = new Set<number>();
  for (const part of field.split(",")) {
    const [range, step] = part.split("/");
    const [lo, hi] =
      range === "*"
        ? [0, max]
        : range.includes("-")
          ? range.split("-").map(Number)
          : [Number(range), step ? max : Number(range)];
    for (let v = lo; v <= hi; v += Number(step ?? 1)) out.add(v);
  }
  return out;
}

/** The documented rules, naively: walk every minute of [from, to), which holds at most the one
 *  transition `tr` (so the offset is the one before or the one after it). */
function oracle(expr: string, tz: string, from: number, to: number, tr: number | null): number[] {
  const [oA, oB] = tr === null ? [offset(tz, from), offset(tz, from)] : [offset(tz, tr - MIN), offset(tz, tr)];
  const at = (t: number) => (tr === null || t < tr ? oA : oB);
  const [mf, hf] = expr.split(" ");
  const minutes = values(mf, 59);
  const hours = values(hf, 23);
  const intervalLike = /^\*(\/\d+)?$/.test(hf);
  const matches = (wall: number) =>
    minutes.has(new Date(wall).getUTCMinutes()) && hours.has(new Date(wall).getUTCHours());
  const out: number[] = [];
  for (let t = from; t < to; t += MIN) {
    const o = at(t);
    const before = at(t - MIN);
    let fire = false;
    if (o > before && !intervalLike) {
      // Spring forward at t: walls [t+before, t+o) do not exist; a fixed-hour match there fires at t.
      for (let w = t + before; w < t + o; w += MIN) if (matches(w)) fire = true;
    }
    if (matches(t + o)) {
      // Fall back: the same wall time earlier, at a larger offset, means this is the second pass.
      const earlierOffset = at(t - 3 * 3_600_000);
      const second = earlierOffset > o && at(t + o - earlierOffset) === earlierOffset && t + o - earlierOffset < t;
      if (!second || intervalLike) fire = true;
    }
    if (fire) out.push(t);
  }
  return out;
}

/** The first offset change after `ms` (daily steps, then minutes), or null within a year. */
function nextTransition(tz: string, ms: number): number | null {
  for (let d = ms; d < ms + 366 * DAY; d += DAY) {
    if (offset(tz, d + DAY) !== offset(tz, d)) {
      for (let t = d; t <= d + DAY; t += MIN) if (offset(tz, t) !== offset(tz, d)) return t;
    }
  }
  return null;
}

const minute = fc.oneof(fc.integer({ min: 0, max: 59 }).map(String), fc.constantFrom("*/15", "*/20", "0,30", "10-12"));
const hour = fc.oneof(
  fc.integer({ min: 0, max: 23 }).map(String),
  fc.constantFrom("*", "*/2", "*/3", "1,2,3", "1-3", "2", "0"),
);
const expr = fc.tuple(minute, hour).map(([m, h]) => `${m} ${h} * * *`);

test("around transitions, nextFires equals the documented rules; croner differs only on transition days", () => {
  let compared = 0;
  let cronerDiffs = 0;
  fc.assert(
    fc.property(
      expr,
      fc.constantFrom(...ZONES),
      fc.integer({ min: Date.UTC(2022, 0, 1), max: Date.UTC(2028, 0, 1) }),
      (e, tz, seed) => {
        const start = Math.floor(seed / MIN) * MIN;
        const tr = nextTransition(tz, start);
        const from = tr === null ? start : tr - 36 * 3_600_000;
        const to = from + 3 * DAY;
        const ours = firesBetween(e, tz, new Date(from - 1), new Date(to - 1), 5000).map((d) => d.getTime());
        expect(ours.map((t) => new Date(t).toISOString())).toEqual(
          oracle(e, tz, from, to, tr).map((t) => new Date(t).toISOString()),
        );
        compared += ours.length;
        const theirs = new Cron(e, { timezone: tz })
          .nextRuns(ours.length + 20, new Date(from - 1))
          .map((d) => d.getTime())
          .filter((t) => t < to);
        const diff = [...ours.filter((t) => !theirs.includes(t)), ...theirs.filter((t) => !ours.includes(t))];
        if (diff.length > 0) cronerDiffs++;
        for (const t of diff)
          expect(
            tr !== null && Math.abs(t - tr) < DAY,
            `${e} ${tz} differs from croner at ${new Date(t).toISOString()}`,
          ).toBe(true);
      },
    ),
    { numRuns: 120, seed: 4 },
  );
  expect(compared).toBeGreaterThan(2000);
  expect(cronerDiffs).toBeGreaterThan(0); // the rules really do differ from croner somewhere
});
