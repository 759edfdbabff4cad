// Property test: nextFires agrees with croner (an independent implementation) everywhere except
// around DST transitions, where our documented Vixie rules deliberately differ.
import { Cron } from "croner";
import fc from "fast-check";
import { expect, test } from "vitest";
import { nextFires } from "../src/cron.ts";
import { offsetAt } from "../src/tz.ts";

const ZONES = [
  "UTC",
  "America/New_York",
  "Europe/Berlin",
  "Australia/Sydney",
  "Asia/Kolkata",
  "America/Sao_Paulo",
  "Pacific/Auckland",
];

const minute = fc.oneof(
  fc.integer({ min: 0, max: 59 }).map(String),
  fc.constantFrom("*", "*/5", "*/15", "0,30", "10-20"),
);
const hour = fc.oneof(fc.integer({ min: 0, max: 23 }).map(String), fc.constantFrom("*", "*/2", "*/3", "1,2,3", "9-17"));
// Keep one of the day fields `*`: croner and Vixie disagree on what counts as a "restricted" field.
const days = fc.oneof(
  fc.constant("* * *"),
  fc.integer({ min: 1, max: 28 }).map((d) => `${d} * *`),
  fc.integer({ min: 0, max: 6 }).map((d) => `* * ${d}`),
  fc.integer({ min: 1, max: 12 }).map((m) => `1 ${m} *`),
);
const expr = fc.tuple(minute, hour, days).map(([m, h, d]) => `${m} ${h} ${d}`);
const start = fc
  .integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) })
  .map((ms) => new Date(Math.floor(ms / 1000) * 1000));

/** Within 36 h of an offset change: the window where the documented rules may differ from croner. */
const nearTransition = (tz: string, t: number) => offsetAt(tz, t - 36 * 3_600_000) !== offsetAt(tz, t + 36 * 3_600_000);

test("agrees with croner away from DST transitions", () => {
  let compared = 0;
  fc.assert(
    fc.property(expr, fc.constantFrom(...ZONES), start, (e, tz, after) => {
      const ours = nextFires(e, tz, after, 12).map((d) => d.getTime());
      const theirs = new Cron(e, { timezone: tz }).nextRuns(12, after).map((d) => d.getTime());
      // Remove fires near transitions from both, and compare only up to the earlier last fire
      // (near the end one list may continue beyond the other).
      const horizon = Math.min(ours[ours.length - 1] ?? 0, theirs[theirs.length - 1] ?? 0);
      const a = ours.filter((t) => t <= horizon && !nearTransition(tz, t));
      const b = theirs.filter((t) => t <= horizon && !nearTransition(tz, t));
      compared += a.length;
      expect(a.map((t) => new Date(t).toISOString())).toEqual(b.map((t) => new Date(t).toISOString()));
    }),
    { numRuns: 400, seed: 42 },
  );
  expect(compared).toBeGreaterThan(1000);
});

test("differences near transitions are only the documented ones (New York 2025)", () => {
  // Spring: croner also moves 02:30 forward; our rule is 03:00 exactly, once.
  const spring = nextFires("30 2 * * *", "America/New_York", new Date("2025-03-08T12:00:00Z"), 1)[0];
  expect(spring.toISOString()).toBe("2025-03-09T07:00:00.000Z");
  // Fall: interval-like fires in both passes of 01:xx; ours keeps both, fixed-hour keeps the first.
  const interval = nextFires("0 * * * *", "America/New_York", new Date("2025-11-02T04:30:00Z"), 3).map((d) =>
    d.toISOString(),
  );
  expect(interval).toEqual(["2025-11-02T05:00:00.000Z", "2025-11-02T06:00:00.000Z", "2025-11-02T07:00:00.000Z"]);
});
