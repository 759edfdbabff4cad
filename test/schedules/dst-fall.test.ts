// 48 simulated hours across each zone's fall-back day, three executors racing the materializer on real
// Postgres; the fires asserted are those docs/schedules.md documents (written out by hand here).
import { describe, expect, it } from "vitest";
import { every, simulate48h } from "./dst-sim.ts";

const HOUR = 3_600_000;
const CRONS = ["30 2 * * *", "*/30 1 * * *", "30 1 * * *", "*/30 2 * * *", "0 * * * *", "*/15 * * * *"];

async function expectSim(tz: string, start: string, end: string, daily: Record<string, string[]>) {
  const r = await simulate48h(tz, start, CRONS, 7);
  expect(r.fires).toEqual({
    ...daily,
    // Interval-like jobs fire in both passes of the repeated hour: every UTC hour / quarter hour.
    "0 * * * *": every(start, end, HOUR),
    "*/15 * * * *": every(start, end, HOUR / 4),
  });
  expect(r.skipped).toBe(0);
  expect(r.planned).toBe(r.rows);
  expect(r.busyExecutors).toBeGreaterThan(1);
}

describe("fall back, 48 h, 3 executors", () => {
  it("America/New_York 2025-11-02 (02:00 EDT → 01:00 EST: 01:xx happens twice)", async () => {
    await expectSim("America/New_York", "2025-11-01T12:00:00Z", "2025-11-03T12:00:00Z", {
      "30 2 * * *": ["2025-11-02T07:30:00Z", "2025-11-03T07:30:00Z"],
      // Fixed hour 1: the first pass only (EDT), never again in the EST pass.
      "*/30 1 * * *": ["2025-11-02T05:00:00Z", "2025-11-02T05:30:00Z", "2025-11-03T06:00:00Z", "2025-11-03T06:30:00Z"],
      "30 1 * * *": ["2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"],
      "*/30 2 * * *": ["2025-11-02T07:00:00Z", "2025-11-02T07:30:00Z", "2025-11-03T07:00:00Z", "2025-11-03T07:30:00Z"],
    });
  });

  it("Europe/Berlin 2025-10-26 (03:00 CEST → 02:00 CET: 02:xx happens twice)", async () => {
    await expectSim("Europe/Berlin", "2025-10-25T12:00:00Z", "2025-10-27T12:00:00Z", {
      "30 2 * * *": ["2025-10-26T00:30:00Z" /* 02:30 CEST; not again at 02:30 CET */, "2025-10-27T01:30:00Z"],
      "*/30 1 * * *": ["2025-10-25T23:00:00Z", "2025-10-25T23:30:00Z", "2025-10-27T00:00:00Z", "2025-10-27T00:30:00Z"],
      "30 1 * * *": ["2025-10-25T23:30:00Z", "2025-10-27T00:30:00Z"],
      "*/30 2 * * *": ["2025-10-26T00:00:00Z", "2025-10-26T00:30:00Z", "2025-10-27T01:00:00Z", "2025-10-27T01:30:00Z"],
    });
  });

  it("Australia/Sydney 2025-04-06 (southern hemisphere: 03:00 AEDT → 02:00 AEST)", async () => {
    await expectSim("Australia/Sydney", "2025-04-04T12:00:00Z", "2025-04-06T12:00:00Z", {
      "30 2 * * *": ["2025-04-04T15:30:00Z", "2025-04-05T15:30:00Z" /* 02:30 AEDT only */],
      "*/30 1 * * *": ["2025-04-04T14:00:00Z", "2025-04-04T14:30:00Z", "2025-04-05T14:00:00Z", "2025-04-05T14:30:00Z"],
      "30 1 * * *": ["2025-04-04T14:30:00Z", "2025-04-05T14:30:00Z"],
      "*/30 2 * * *": ["2025-04-04T15:00:00Z", "2025-04-04T15:30:00Z", "2025-04-05T15:00:00Z", "2025-04-05T15:30:00Z"],
    });
  });
});
