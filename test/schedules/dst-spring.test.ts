// 48 simulated hours across each zone's spring-forward day, three executors racing the materializer on
// real Postgres; the fires asserted are those docs/schedules.md documents (written out by hand here,
// not computed with the code under test).
import { describe, expect, it } from "vitest";
import { every, simulate48h } from "./dst-sim.ts";

const HOUR = 3_600_000;
const CRONS = ["30 2 * * *", "*/30 1 * * *", "30 1 * * *", "*/30 2 * * *", "0 * * * *", "*/15 * * * *"];

async function expectSim(tz: string, start: string, end: string, daily: Record<string, string[]>, alignMs = 0) {
  const r = await simulate48h(tz, start, CRONS);
  expect(r.fires).toEqual({
    ...daily,
    // Interval-like jobs follow elapsed time: every UTC hour / quarter hour, no gap, no repeat.
    "0 * * * *": every(start, end, HOUR, alignMs),
    "*/15 * * * *": every(start, end, HOUR / 4),
  });
  expect(r.skipped).toBe(0);
  expect(r.planned).toBe(r.rows); // no fire was planned by two executors
  expect(r.busyExecutors).toBeGreaterThan(1);
}

describe("spring forward, 48 h, 3 executors", () => {
  it("America/New_York 2025-03-09 (02:00 EST → 03:00 EDT)", async () => {
    await expectSim("America/New_York", "2025-03-08T12:00:00Z", "2025-03-10T12:00:00Z", {
      "30 2 * * *": ["2025-03-09T07:00:00Z" /* 02:30 does not exist: 03:00 EDT */, "2025-03-10T06:30:00Z"],
      "*/30 1 * * *": ["2025-03-09T06:00:00Z", "2025-03-09T06:30:00Z", "2025-03-10T05:00:00Z", "2025-03-10T05:30:00Z"],
      "30 1 * * *": ["2025-03-09T06:30:00Z", "2025-03-10T05:30:00Z"],
      "*/30 2 * * *": [
        "2025-03-09T07:00:00Z" /* 02:00 and 02:30 collapse into one */,
        "2025-03-10T06:00:00Z",
        "2025-03-10T06:30:00Z",
      ],
    });
  });

  it("Europe/Berlin 2025-03-30 (02:00 CET → 03:00 CEST)", async () => {
    await expectSim("Europe/Berlin", "2025-03-29T12:00:00Z", "2025-03-31T12:00:00Z", {
      "30 2 * * *": ["2025-03-30T01:00:00Z", "2025-03-31T00:30:00Z"],
      "*/30 1 * * *": ["2025-03-30T00:00:00Z", "2025-03-30T00:30:00Z", "2025-03-30T23:00:00Z", "2025-03-30T23:30:00Z"],
      "30 1 * * *": ["2025-03-30T00:30:00Z", "2025-03-30T23:30:00Z"],
      "*/30 2 * * *": ["2025-03-30T01:00:00Z", "2025-03-31T00:00:00Z", "2025-03-31T00:30:00Z"],
    });
  });

  it("Australia/Sydney 2025-10-05 (southern hemisphere: 02:00 AEST → 03:00 AEDT)", async () => {
    await expectSim("Australia/Sydney", "2025-10-04T00:00:00Z", "2025-10-06T00:00:00Z", {
      "30 2 * * *": ["2025-10-04T16:00:00Z", "2025-10-05T15:30:00Z"],
      "*/30 1 * * *": ["2025-10-04T15:00:00Z", "2025-10-04T15:30:00Z", "2025-10-05T14:00:00Z", "2025-10-05T14:30:00Z"],
      "30 1 * * *": ["2025-10-04T15:30:00Z", "2025-10-05T14:30:00Z"],
      "*/30 2 * * *": ["2025-10-04T16:00:00Z", "2025-10-05T15:00:00Z", "2025-10-05T15:30:00Z"],
    });
  });

  it("Asia/Kolkata (+05:30, no DST) over the same 48 h as New York's change: nothing moves", async () => {
    await expectSim(
      "Asia/Kolkata",
      "2025-03-08T12:00:00Z",
      "2025-03-10T12:00:00Z",
      {
        "30 2 * * *": ["2025-03-08T21:00:00Z", "2025-03-09T21:00:00Z"],
        "*/30 1 * * *": [
          "2025-03-08T19:30:00Z",
          "2025-03-08T20:00:00Z",
          "2025-03-09T19:30:00Z",
          "2025-03-09T20:00:00Z",
        ],
        "30 1 * * *": ["2025-03-08T20:00:00Z", "2025-03-09T20:00:00Z"],
        "*/30 2 * * *": [
          "2025-03-08T20:30:00Z",
          "2025-03-08T21:00:00Z",
          "2025-03-09T20:30:00Z",
          "2025-03-09T21:00:00Z",
        ],
      },
      HOUR / 2,
    );
  });
});
