// Spread crons: a job's offset is a pure function of its id, inside the window, spread uniformly over
// it, and the shifted schedule is the cron's instants plus that offset (planFires included).
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { nextFires } from "../src/cron.ts";
import { ulid } from "../src/ids.ts";
import { planFires } from "../src/schedule.ts";
import {
  formatSpread,
  maxSpreadMs,
  nextShiftedFires,
  parseSpread,
  spreadOffsetMs,
  stableHash32,
} from "../src/spread.ts";

const DAY = 86_400_000;
const jobId = fc.stringMatching(/^job_[0-9A-HJKMNP-TV-Z]{26}$/);

describe("offsets", () => {
  test("within [0, window), and the same for the same id", () => {
    fc.assert(
      fc.property(jobId, fc.integer({ min: 1, max: DAY }), (id, window) => {
        const o = spreadOffsetMs(id, window);
        expect(o).toBeGreaterThanOrEqual(0);
        expect(o).toBeLessThan(window);
        expect(Number.isInteger(o)).toBe(true);
        expect(spreadOffsetMs(id, window)).toBe(o);
      }),
    );
  });

  test("no window, no offset", () => {
    expect(spreadOffsetMs("job_x", null)).toBe(0);
    expect(spreadOffsetMs("job_x", 0)).toBe(0);
  });

  test("pinned: the hash never changes (a change would move every spread job's fires)", () => {
    expect(stableHash32("job_01JABCDEFGHJKMNPQRSTVWXYZ0")).toBe(1648671422);
    expect(stableHash32("job_01JABCDEFGHJKMNPQRSTVWXYZ1")).toBe(2100975690);
    expect(spreadOffsetMs("job_01JABCDEFGHJKMNPQRSTVWXYZ0", 600_000)).toBe(230316);
  });

  test("uniform: ids made in one millisecond (one ULID time prefix) fill 60 buckets of a 10-minute window evenly", () => {
    const window = 600_000;
    const n = 60_000;
    const buckets = new Array(60).fill(0);
    const ms = Date.parse("2026-01-01T00:00:00Z");
    for (let i = 0; i < n; i++) buckets[Math.floor(spreadOffsetMs(`job_${ulid(ms)}`, window) / 10_000)]++;
    // Expected 1000 per bucket; a chi-square with 59 degrees of freedom is above 100 with p < 0.001.
    const chi = buckets.reduce((s, b) => s + (b - 1000) ** 2 / 1000, 0);
    expect(chi).toBeLessThan(100);
    expect(Math.max(...buckets)).toBeLessThan(1150);
    expect(Math.min(...buckets)).toBeGreaterThan(850);
  });
});

describe("the shifted schedule", () => {
  test("is each cron instant plus the offset, strictly increasing, whatever the start", () => {
    fc.assert(
      fc.property(
        jobId,
        fc.constantFrom("0 0 * * *", "*/15 * * * *", "30 2 * * *", "0 9 * * 1-5"),
        fc.constantFrom("UTC", "Europe/Berlin", "America/New_York"),
        fc.integer({ min: Date.parse("2025-01-01T00:00:00Z"), max: Date.parse("2027-01-01T00:00:00Z") }),
        (id, cron, tz, start) => {
          const window = maxSpreadMs(cron, tz, new Date(start));
          const offset = spreadOffsetMs(id, window);
          const shifted = nextShiftedFires(cron, tz, new Date(start), 6, offset);
          const plain = nextFires(cron, tz, new Date(start - offset), 6);
          expect(shifted.map((d) => d.getTime())).toEqual(plain.map((d) => d.getTime() + offset));
          expect(shifted[0].getTime()).toBeGreaterThan(start);
          for (let i = 1; i < shifted.length; i++)
            expect(shifted[i].getTime()).toBeGreaterThan(shifted[i - 1].getTime());
        },
      ),
      { numRuns: 60 },
    );
  });

  test("planFires fires at the shifted instants and persists the next shifted one", () => {
    const offset = 7 * 60_000 + 23_456;
    const first = new Date(Date.parse("2026-03-01T00:00:00Z") + offset);
    const plan = planFires(
      {
        cron: "*/15 * * * *",
        timezone: "UTC",
        nextFireAt: first,
        misfire: "fire_once",
        overlap: "allow",
        catchupWindowMs: DAY,
        offsetMs: offset,
      },
      new Date(first.getTime() + 31 * 60_000),
      1000,
    );
    expect(plan.fire.map((d) => d.toISOString())).toEqual(["2026-03-01T00:37:23.456Z"]);
    expect(plan.skipped.map((s) => s.at.toISOString())).toEqual([
      "2026-03-01T00:07:23.456Z",
      "2026-03-01T00:22:23.456Z",
    ]);
    expect(plan.nextFireAt?.toISOString()).toBe("2026-03-01T00:52:23.456Z");
  });
});

describe("the window", () => {
  test("parses days, hours, minutes and seconds; formats back", () => {
    expect(parseSpread("PT10M")).toEqual({ ok: true, ms: 600_000 });
    expect(parseSpread("PT1H30M")).toEqual({ ok: true, ms: 5_400_000 });
    expect(parseSpread("P1D")).toEqual({ ok: true, ms: DAY });
    expect(parseSpread("PT0.5S")).toEqual({ ok: true, ms: 500 });
    for (const bad of ["", "P", "PT", "10m", "PT-1M", "P1M", "P1W", "PT0S", "pt1h"]) {
      expect(parseSpread(bad).ok, bad).toBe(false);
    }
    fc.assert(
      fc.property(fc.integer({ min: 1, max: DAY }), (ms) => {
        expect(parseSpread(formatSpread(ms))).toEqual({ ok: true, ms });
      }),
    );
  });

  test("at most a day, and at most the cron's shortest gap", () => {
    const from = new Date("2026-01-01T00:00:00Z");
    expect(maxSpreadMs("0 0 * * *", "UTC", from)).toBe(DAY);
    expect(maxSpreadMs("0 0 1 * *", "UTC", from)).toBe(DAY);
    expect(maxSpreadMs("*/5 * * * *", "UTC", from)).toBe(300_000);
    expect(maxSpreadMs("0 9,10 * * *", "UTC", from)).toBe(3_600_000);
  });
});
