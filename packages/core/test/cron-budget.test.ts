// A walk over a cron's fires is bounded by the days it visits as well as by the fires it finds
// (FireBudget): a sparse cron over a long range stops after its budget and says where to resume, and
// resuming slice after slice finds exactly the fires one unbounded walk does.
import { expect, test } from "vitest";
import { type FireBudget, firesBetween } from "../src/cron.ts";

test("a sparse cron from year 0001 stops after its days, not after a thousand years", () => {
  const budget: FireBudget = { days: 5000 };
  const from = new Date("0001-01-01T00:00:00Z");
  const fires = firesBetween("0 0 0 29 2 *", "America/Santiago", from, new Date("2026-01-01T00:00:00Z"), 1000, budget);
  // 5,000 days hold three or four leap days, and the walk stopped for its days, not its count.
  expect(fires.length).toBeGreaterThanOrEqual(3);
  expect(fires.length).toBeLessThanOrEqual(4);
  expect(budget.days).toBeLessThanOrEqual(0);
  expect(budget.resumeAfter).toBeInstanceOf(Date);
  expect(budget.resumeAfter!.getTime()).toBeLessThan(new Date("0015-01-01T00:00:00Z").getTime());
});

test("a walk that ends within its budget leaves no resume point", () => {
  const budget: FireBudget = { days: 5000 };
  const fires = firesBetween(
    "0 30 2 * * 0",
    "America/Santiago",
    new Date("2025-01-01T00:00:00Z"),
    new Date("2025-02-01T00:00:00Z"),
    1000,
    budget,
  );
  expect(fires.length).toBe(4);
  expect(budget.resumeAfter).toBeUndefined();
  // Days past the range's end are not visited.
  expect(5000 - budget.days).toBeLessThan(40);
});

test("slices resumed where the budget stopped find exactly the fires of one walk, DST days included", () => {
  const cases: [string, string][] = [
    ["0 30 2 * * 0", "America/Santiago"],
    ["30 2 * * *", "America/New_York"],
    ["*/30 1-2 * * *", "Europe/London"],
    ["0 0 29 2 *", "UTC"],
    ["15 0 * * 1", "Australia/Lord_Howe"],
  ];
  const after = new Date("2019-06-01T00:00:00Z");
  const until = new Date("2026-06-01T00:00:00Z");
  for (const [cron, tz] of cases) {
    const whole = firesBetween(cron, tz, after, until, 100_000).map((d) => d.getTime());
    for (const days of [3, 7, 40]) {
      const sliced: number[] = [];
      let cursor = after;
      for (let guard = 0; guard < 10_000; guard++) {
        const budget: FireBudget = { days };
        const got = firesBetween(cron, tz, cursor, until, 100_000, budget);
        sliced.push(...got.map((d) => d.getTime()));
        if (!budget.resumeAfter) break;
        cursor = budget.resumeAfter;
      }
      expect(sliced, `${cron} in ${tz}, ${days} days a slice`).toEqual(whole);
    }
  }
});
