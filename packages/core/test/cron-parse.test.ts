import { describe, expect, test } from "vitest";
import { parseCron, validateTimezone } from "../src/cron.ts";

describe("validateTimezone", () => {
  test.each(["UTC", "America/New_York", "Europe/Berlin", "Australia/Sydney", "Asia/Kolkata"])("accepts %s", (tz) => {
    expect(validateTimezone(tz)).toBe(true);
  });
  test.each(["", "  ", "Mars/Olympus", "Europe/Nowhere", "not a zone"])("rejects %j", (tz) => {
    expect(validateTimezone(tz)).toBe(false);
  });
});

describe("parseCron accepts", () => {
  test.each([
    ["0 9 * * *", false],
    ["*/15 * * * *", false],
    ["0 0 * * 1-5", false],
    ["0 0 * JAN-mar thu", false],
    ["0 0 1,15 * *", false],
    ["5/10 * * * *", false],
    ["0 0 * * 7", false],
    ["0 0 ? * mon", false],
    ["0 0 29 2 *", false], // leap day is real
    ["*/5 * * * * *", true],
    ["30 0 9 * * 1", true],
  ])("%s", (expr, hasSeconds) => {
    expect(parseCron(expr)).toEqual({ ok: true, expr, hasSeconds });
  });

  test("trims and normalises whitespace", () => {
    expect(parseCron("  0   9 *\t* *  ")).toEqual({ ok: true, expr: "0 9 * * *", hasSeconds: false });
  });

  test.each(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "@DAILY"])(
    "alias %s",
    (a) => {
      expect(parseCron(a)).toEqual({ ok: true, expr: a.toLowerCase(), hasSeconds: false });
    },
  );
});

describe("parseCron rejects with a message saying what is wrong", () => {
  test.each([
    ["", /empty/],
    ["   ", /empty/],
    ["* * * *", /found 4/],
    ["*", /found 1/],
    ["1 2 3 4 5 6 7", /found 7/],
    ["60 * * * *", /minute value 60 is out of range 0-59/],
    ["0 24 * * *", /hour value 24 is out of range 0-23/],
    ["0 0 0 * *", /day-of-month value 0 is out of range 1-31/],
    ["0 0 32 * *", /day-of-month value 32/],
    ["0 0 * 13 *", /month value 13/],
    ["0 0 * * 8", /day-of-week value 8/],
    ["61 * * * * *", /second value 61/],
    ["x * * * *", /minute field: "x" is not a number/],
    ["0 0 * foo *", /month field: "foo" is not a number or name/],
    ["*/0 * * * *", /step 0 is out of range/],
    ["*/x * * * *", /step "x" is not a number/],
    ["5-1 * * * *", /runs backwards/],
    ["1-2-3 * * * *", /not a valid range/],
    ["1,,2 * * * *", /empty list item/],
    ["0 0 L * *", /not supported/],
    ["0 0 * * 5#2", /day-of-week/],
    ["? * * * *", /only allowed in day-of-month and day-of-week/],
    ["@every 5m", /unknown cron alias/],
    ["@reboot", /unknown cron alias/],
    ["0 0 30 2 *", /can never fire/],
    ["0 0 31 2 *", /can never fire/],
    ["0 0 31 4 *", /can never fire/],
    ["0 0 31 4,6,9,11 *", /can never fire/],
  ])("%j", (expr, message) => {
    const r = parseCron(expr);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });

  test("Feb 30 OR a weekday is fine (Vixie: both day fields restricted → either matches)", () => {
    expect(parseCron("0 0 30 2 1").ok).toBe(true);
  });
});
