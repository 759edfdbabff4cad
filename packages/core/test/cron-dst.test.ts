// The documented DST rules (CRON_DST_RULES), zone by zone.
import { describe, expect, test } from "vitest";
import { CRON_DST_RULES, firesBetween, nextFires } from "../src/cron.ts";

const iso = (ds: Date[]) => ds.map((d) => d.toISOString().replace(".000", ""));
const fires = (expr: string, tz: string, after: string, n: number) => iso(nextFires(expr, tz, new Date(after), n));

describe("America/New_York (spring 2025-03-09 02:00→03:00, fall 2025-11-02 02:00→01:00)", () => {
  const tz = "America/New_York";
  test("spring gap: a fixed time in the gap fires once at 03:00 EDT", () => {
    expect(fires("30 2 * * *", tz, "2025-03-08T12:00:00Z", 3)).toEqual([
      "2025-03-09T07:00:00Z", // 03:00 EDT
      "2025-03-10T06:30:00Z", // 02:30 EDT
      "2025-03-11T06:30:00Z",
    ]);
  });
  test("spring gap: several gap times collapse into one fire", () => {
    expect(fires("*/30 2 * * *", tz, "2025-03-08T12:00:00Z", 3)).toEqual([
      "2025-03-09T07:00:00Z",
      "2025-03-10T06:00:00Z",
      "2025-03-10T06:30:00Z",
    ]);
  });
  test("spring gap and 03:00 both matching collapse to one instant", () => {
    expect(fires("0 2,3 * * *", tz, "2025-03-08T12:00:00Z", 3)).toEqual([
      "2025-03-09T07:00:00Z",
      "2025-03-10T06:00:00Z",
      "2025-03-10T07:00:00Z",
    ]);
  });
  test("spring gap: interval-like expressions skip the missing hour, no catch-up", () => {
    expect(fires("*/30 * * * *", tz, "2025-03-09T05:00:00Z", 4)).toEqual([
      "2025-03-09T05:30:00Z", // 00:30 EST
      "2025-03-09T06:00:00Z", // 01:00 EST
      "2025-03-09T06:30:00Z", // 01:30 EST
      "2025-03-09T07:00:00Z", // 03:00 EDT
    ]);
    expect(fires("30 */2 * * *", tz, "2025-03-09T05:00:00Z", 2)).toEqual([
      "2025-03-09T05:30:00Z", // 00:30 EST; 02:30 does not exist
      "2025-03-09T08:30:00Z", // 04:30 EDT
    ]);
  });
  test("fall back: a fixed hour fires only at the first occurrence", () => {
    expect(fires("30 1 * * *", tz, "2025-11-01T12:00:00Z", 2)).toEqual([
      "2025-11-02T05:30:00Z",
      "2025-11-03T06:30:00Z",
    ]);
    expect(fires("*/30 1 * * *", tz, "2025-11-01T12:00:00Z", 3)).toEqual([
      "2025-11-02T05:00:00Z", // 01:00 EDT
      "2025-11-02T05:30:00Z", // 01:30 EDT
      "2025-11-03T06:00:00Z",
    ]);
  });
  test("fall back: interval-like fires at both occurrences", () => {
    expect(fires("*/30 * * * *", tz, "2025-11-02T04:45:00Z", 5)).toEqual([
      "2025-11-02T05:00:00Z", // 01:00 EDT
      "2025-11-02T05:30:00Z", // 01:30 EDT
      "2025-11-02T06:00:00Z", // 01:00 EST
      "2025-11-02T06:30:00Z", // 01:30 EST
      "2025-11-02T07:00:00Z", // 02:00 EST
    ]);
  });
  test("starting inside the repeated hour (second pass) a fixed-hour job waits for tomorrow", () => {
    expect(fires("30 1 * * *", tz, "2025-11-02T06:10:00Z", 1)).toEqual(["2025-11-03T06:30:00Z"]);
  });
});

describe("Europe/Berlin (spring 2025-03-30 02:00→03:00, fall 2025-10-26 03:00→02:00)", () => {
  const tz = "Europe/Berlin";
  test("spring gap", () => {
    expect(fires("30 2 * * *", tz, "2025-03-29T12:00:00Z", 2)).toEqual([
      "2025-03-30T01:00:00Z",
      "2025-03-31T00:30:00Z",
    ]);
  });
  test("fall back, fixed hour 2", () => {
    expect(fires("30 2 * * *", tz, "2025-10-25T12:00:00Z", 2)).toEqual([
      "2025-10-26T00:30:00Z",
      "2025-10-27T01:30:00Z",
    ]);
    expect(fires("*/30 2 * * *", tz, "2025-10-25T12:00:00Z", 3)).toEqual([
      "2025-10-26T00:00:00Z", // 02:00 CEST
      "2025-10-26T00:30:00Z", // 02:30 CEST
      "2025-10-27T01:00:00Z",
    ]);
  });
  test("fall back, interval-like", () => {
    expect(fires("0 * * * *", tz, "2025-10-25T23:30:00Z", 4)).toEqual([
      "2025-10-26T00:00:00Z", // 02:00 CEST
      "2025-10-26T01:00:00Z", // 02:00 CET
      "2025-10-26T02:00:00Z", // 03:00 CET
      "2025-10-26T03:00:00Z",
    ]);
  });
});

describe("Australia/Sydney (southern hemisphere: spring 2025-10-05, fall 2025-04-06)", () => {
  const tz = "Australia/Sydney";
  test("spring forward on the first Sunday of October: 02:30 fires at 03:00 AEDT", () => {
    expect(fires("30 2 * * *", tz, "2025-10-04T00:00:00Z", 2)).toEqual([
      "2025-10-04T16:00:00Z", // 03:00 AEDT (+11)
      "2025-10-05T15:30:00Z", // 02:30 AEDT
    ]);
  });
  test("fall back on the first Sunday of April: 03:00→02:00", () => {
    expect(fires("30 2 * * *", tz, "2025-04-05T00:00:00Z", 2)).toEqual([
      "2025-04-05T15:30:00Z", // 02:30 AEDT, first occurrence only
      "2025-04-06T16:30:00Z", // 02:30 AEST
    ]);
    expect(fires("*/30 2 * * *", tz, "2025-04-05T00:00:00Z", 3)).toEqual([
      "2025-04-05T15:00:00Z",
      "2025-04-05T15:30:00Z",
      "2025-04-06T16:00:00Z",
    ]);
    expect(fires("30 * * * *", tz, "2025-04-05T15:00:00Z", 3)).toEqual([
      "2025-04-05T15:30:00Z", // 02:30 AEDT
      "2025-04-05T16:30:00Z", // 02:30 AEST
      "2025-04-05T17:30:00Z", // 03:30 AEST
    ]);
  });
});

describe("Asia/Kolkata (+05:30, no DST)", () => {
  test("daily and half-hour offset", () => {
    expect(fires("0 9 * * *", "Asia/Kolkata", "2025-03-01T00:00:00Z", 2)).toEqual([
      "2025-03-01T03:30:00Z",
      "2025-03-02T03:30:00Z",
    ]);
    expect(fires("30 2 * * *", "Asia/Kolkata", "2025-03-08T12:00:00Z", 1)).toEqual(["2025-03-08T21:00:00Z"]);
  });
});

describe("transitions at midnight and 30-minute DST", () => {
  test("America/Santiago: 00:00 does not exist on 2025-09-07 → fires at 01:00 -03", () => {
    expect(fires("0 0 * * *", "America/Santiago", "2025-09-05T12:00:00Z", 3)).toEqual([
      "2025-09-06T04:00:00Z",
      "2025-09-07T04:00:00Z", // the gap instant
      "2025-09-08T03:00:00Z",
    ]);
  });
  test("America/Santiago: 23:xx on 2025-04-05 repeats (fall back at midnight)", () => {
    expect(fires("30 23 * * *", "America/Santiago", "2025-04-05T12:00:00Z", 2)).toEqual([
      "2025-04-06T02:30:00Z",
      "2025-04-07T03:30:00Z",
    ]);
    expect(fires("0 * * * *", "America/Santiago", "2025-04-06T01:30:00Z", 3)).toEqual([
      "2025-04-06T02:00:00Z", // 23:00 -03
      "2025-04-06T03:00:00Z", // 23:00 -04
      "2025-04-06T04:00:00Z", // 00:00 -04
    ]);
  });
  test("Australia/Lord_Howe: half-hour shifts", () => {
    expect(fires("15 2 * * *", "Australia/Lord_Howe", "2025-10-04T00:00:00Z", 2)).toEqual([
      "2025-10-04T15:30:00Z",
      "2025-10-05T15:15:00Z",
    ]);
    expect(fires("45 1 * * *", "Australia/Lord_Howe", "2025-04-05T00:00:00Z", 2)).toEqual([
      "2025-04-05T14:45:00Z",
      "2025-04-06T15:15:00Z",
    ]);
  });
});

describe("general", () => {
  test("6-field seconds expressions", () => {
    expect(fires("*/20 * * * * *", "UTC", "2025-01-01T00:00:00Z", 3)).toEqual([
      "2025-01-01T00:00:20Z",
      "2025-01-01T00:00:40Z",
      "2025-01-01T00:01:00Z",
    ]);
    expect(fires("15 30 9 * * 1", "Europe/Berlin", "2025-01-01T00:00:00Z", 1)).toEqual(["2025-01-06T08:30:15Z"]);
  });
  test("strictly after, even with sub-second `after`", () => {
    expect(fires("* * * * * *", "UTC", "2025-01-01T00:00:00.500Z", 2)).toEqual([
      "2025-01-01T00:00:01Z",
      "2025-01-01T00:00:02Z",
    ]);
    expect(fires("0 9 * * *", "UTC", "2025-01-01T09:00:00Z", 1)).toEqual(["2025-01-02T09:00:00Z"]);
  });
  test("aliases", () => {
    expect(fires("@daily", "Europe/Berlin", "2025-06-01T12:00:00Z", 1)).toEqual(["2025-06-01T22:00:00Z"]);
    expect(fires("@hourly", "UTC", "2025-06-01T12:00:00Z", 1)).toEqual(["2025-06-01T13:00:00Z"]);
    expect(fires("@weekly", "UTC", "2025-06-01T12:00:00Z", 1)).toEqual(["2025-06-08T00:00:00Z"]); // Sunday
    expect(fires("@monthly", "UTC", "2025-06-01T12:00:00Z", 1)).toEqual(["2025-07-01T00:00:00Z"]);
    expect(fires("@yearly", "UTC", "2025-06-01T12:00:00Z", 1)).toEqual(["2026-01-01T00:00:00Z"]);
  });
  test("leap day", () => {
    expect(fires("0 0 29 2 *", "UTC", "2025-01-01T00:00:00Z", 2)).toEqual([
      "2028-02-29T00:00:00Z",
      "2032-02-29T00:00:00Z",
    ]);
  });
  test("day-of-month OR day-of-week when both restricted", () => {
    // 2025-06-13 is a Friday; the 15th a Sunday.
    expect(fires("0 0 15 * 5", "UTC", "2025-06-12T00:00:00Z", 3)).toEqual([
      "2025-06-13T00:00:00Z",
      "2025-06-15T00:00:00Z",
      "2025-06-20T00:00:00Z",
    ]);
  });
  test("invalid input throws (callers validate first)", () => {
    expect(() => nextFires("* * * *", "UTC", new Date(), 1)).toThrow(/found 4/);
    expect(() => nextFires("* * * * *", "Nope/Zone", new Date(), 1)).toThrow(/timezone/);
  });
  test("firesBetween: (after, until], limited", () => {
    const a = new Date("2025-01-01T00:00:00Z");
    const b = new Date("2025-01-01T01:00:00Z");
    expect(firesBetween("*/15 * * * *", "UTC", a, b, 100)).toHaveLength(4);
    expect(firesBetween("*/15 * * * *", "UTC", a, b, 2)).toHaveLength(2);
    expect(firesBetween("* * * * * *", "UTC", a, b, 10_000)).toHaveLength(3600);
  });
  test("strictly increasing across a year of DST changes", () => {
    for (const tz of ["America/New_York", "Europe/Berlin", "Australia/Sydney", "Australia/Lord_Howe"]) {
      const ds = nextFires("*/20 * * * *", tz, new Date("2025-01-01T00:00:00Z"), 15_000).map((d) => d.getTime());
      for (let i = 1; i < ds.length; i++) expect(ds[i]).toBeGreaterThan(ds[i - 1]);
    }
  });
  test("documents the rules", () => {
    expect(CRON_DST_RULES).toMatch(/first\s+occurrence/);
  });
});
