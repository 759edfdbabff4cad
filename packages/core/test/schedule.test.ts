// planFires: what the materializer writes for one cron job — misfire and overlap decisions, each a row.
import { describe, expect, test } from "vitest";
import { nextFires } from "../src/cron.ts";
import { EXCLUSIVE_LOOKAHEAD_MS, MAX_FIRES_PER_PASS, planFires, type CronJobState } from "../src/schedule.ts";

const MIN = 60_000;
const T0 = Date.parse("2025-06-01T10:00:00Z");
const at = (min: number, sec = 0) => new Date(T0 + min * MIN + sec * 1000);
const iso = (ds: Date[]) => ds.map((d) => d.toISOString().slice(11, 19));
const job = (over: Partial<CronJobState> = {}): CronJobState => ({
  cron: "*/5 * * * *",
  timezone: "UTC",
  nextFireAt: at(0),
  misfire: "fire_once",
  overlap: "allow",
  catchupWindowMs: 30 * MIN,
  ...over,
});
const skips = (p: ReturnType<typeof planFires>) =>
  p.skipped.map((s) => `${s.at.toISOString().slice(11, 19)} ${s.reason}`);

describe("on time", () => {
  test("fires due within the lookahead, nextFireAt is the first one after it", () => {
    const p = planFires(job(), at(0, -30), 60_000);
    expect(iso(p.fire)).toEqual(["10:00:00"]);
    expect(p.skipped).toEqual([]);
    expect(p.nextFireAt).toEqual(at(5));
  });
  test("a fire late by less than the grace is ordinary lag, not a misfire", () => {
    const p = planFires(job({ misfire: "skip" }), at(0, 59), 1000);
    expect(iso(p.fire)).toEqual(["10:00:00"]);
  });
  test("nothing due: nothing planned, nextFireAt unchanged", () => {
    const p = planFires(job(), at(-10), 1000);
    expect(p).toEqual({ fire: [], skipped: [], nextFireAt: at(0), supersede: null });
  });
});

describe("misfire after an hour down (13 fires missed: 10:00 … 11:00, now 11:01:30)", () => {
  const now = at(61, 30);
  test("fire_once: one catch-up (the latest missed), the rest skipped as misfire", () => {
    const p = planFires(job({ misfire: "fire_once" }), now, 1000);
    expect(iso(p.fire)).toEqual(["11:00:00"]);
    expect(p.skipped).toHaveLength(12);
    expect(p.skipped.every((s) => s.reason === "misfire")).toBe(true);
    expect(p.nextFireAt).toEqual(at(65));
  });
  test("skip: every missed fire skipped", () => {
    const p = planFires(job({ misfire: "skip" }), now, 1000);
    expect(p.fire).toEqual([]);
    expect(p.skipped).toHaveLength(13);
  });
  test("fire_all: every missed fire inside catchupWindowMs, oldest first; older ones skipped outside the window", () => {
    const p = planFires(job({ misfire: "fire_all" }), now, 1000);
    expect(iso(p.fire)).toEqual(["10:35:00", "10:40:00", "10:45:00", "10:50:00", "10:55:00", "11:00:00"]);
    expect(skips(p)).toEqual(
      ["10:00:00", "10:05:00", "10:10:00", "10:15:00", "10:20:00", "10:25:00", "10:30:00"].map(
        (t) => `${t} misfire_outside_window`,
      ),
    );
  });
  test("fire_all with an exclusive overlap policy: the catch-up fires cannot all wait, the latest runs", () => {
    const p = planFires(job({ misfire: "fire_all", overlap: "skip" }), now, 1000);
    expect(iso(p.fire)).toEqual(["11:00:00"]);
    expect(p.skipped.filter((s) => s.reason === "overlap")).toHaveLength(5);
    expect(p.skipped.filter((s) => s.reason === "misfire_outside_window")).toHaveLength(7);
  });
});

describe("overlap, one pass", () => {
  test("allow: a due fire and one in the lookahead are both planned", () => {
    const p = planFires(job({ cron: "* * * * * *" }), at(0), 1000);
    expect(iso(p.fire)).toEqual(["10:00:00", "10:00:01"]);
    expect(p.nextFireAt).toEqual(at(0, 2));
  });
  for (const overlap of ["skip", "buffer_one"] as const) {
    test(`${overlap}: a fire still ahead is deferred to the next pass, not skipped`, () => {
      const p = planFires(job({ cron: "* * * * * *", overlap }), at(0), 1000);
      expect(iso(p.fire)).toEqual(["10:00:00"]);
      expect(p.skipped).toEqual([]);
      expect(p.nextFireAt).toEqual(at(0, 1));
    });
    test(`${overlap}: only future fires in the lookahead → the first is planned, the rest deferred`, () => {
      const p = planFires(job({ cron: "* * * * * *", overlap, nextFireAt: at(0, 1) }), at(0), 3000);
      expect(iso(p.fire)).toEqual(["10:00:01"]);
      expect(p.nextFireAt).toEqual(at(0, 2));
    });
  }
});

test("one pass is bounded; the persisted nextFireAt resumes where it stopped", () => {
  const p = planFires(job({ cron: "* * * * * *", misfire: "skip" }), at(24 * 60), 1000);
  expect(p.skipped.length + p.fire.length).toBe(MAX_FIRES_PER_PASS);
  expect(p.nextFireAt).toEqual(new Date(T0 + MAX_FIRES_PER_PASS * 1000));
});

test("fire_once after an outage longer than one pass: exactly one catch-up, from the last pass", () => {
  let state = job({ cron: "* * * * * *", misfire: "fire_once" });
  const now = at(60); // 3600 missed one-second fires
  const fired: Date[] = [];
  let skipped = 0;
  for (let pass = 0; pass < 10; pass++) {
    const p = planFires(state, now, 1000);
    fired.push(...p.fire);
    skipped += p.skipped.length;
    if (!p.nextFireAt || p.nextFireAt.getTime() > now.getTime() + 1000) break;
    state = { ...state, nextFireAt: p.nextFireAt };
  }
  // Every overdue fire, those inside the grace too: one catch-up (the latest, now), the rest skipped.
  expect(fired.filter((d) => d.getTime() <= now.getTime())).toEqual([now]);
  expect(skipped + fired.length).toBe(3602);
});

describe("a short outage: every 5 s, down 80 s (the grace is 60 s)", () => {
  const now = at(0, 80);
  const state = job({ cron: "*/5 * * * * *", nextFireAt: at(0) }); // 17 fires overdue: 0 s … 80 s
  test("fire_once: exactly one catch-up, the overdue fires inside the grace included", () => {
    const p = planFires({ ...state, misfire: "fire_once" }, now, 1000);
    expect(iso(p.fire)).toEqual(["10:01:20"]);
    expect(p.skipped).toHaveLength(16);
    expect(p.supersede).toEqual({ before: now, reason: "misfire" });
  });
  test("skip: nothing runs", () => {
    const p = planFires({ ...state, misfire: "skip" }, now, 1000);
    expect(p.fire).toEqual([]);
    expect(p.skipped).toHaveLength(17);
  });
  test("fire_all: every overdue fire inside catchupWindowMs", () => {
    const p = planFires({ ...state, misfire: "fire_all", catchupWindowMs: 30_000 }, now, 1000);
    expect(iso(p.fire)).toEqual(["10:00:50", "10:00:55", "10:01:00", "10:01:05", "10:01:10", "10:01:15", "10:01:20"]);
    expect(p.skipped.every((s) => s.reason === "misfire_outside_window")).toBe(true);
  });
  test("late by less than the grace is not a misfire: every overdue fire runs", () => {
    const p = planFires({ ...state, misfire: "fire_once" }, at(0, 50), 1000);
    expect(p.fire).toHaveLength(11);
    expect(p.supersede).toBeNull();
  });
});

describe("a long lookahead", () => {
  test("allow: every fire up to the horizon, the same instants as stepping nextFires one by one (across a DST change)", () => {
    // Europe/Berlin springs forward at 01:00 UTC on 2025-03-30; a 3 h lookahead of an every-minute job.
    const start = new Date("2025-03-29T23:30:00Z");
    const state = job({ cron: "*/1 * * * *", timezone: "Europe/Berlin", nextFireAt: start });
    const p = planFires(state, start, 3 * 3_600_000);
    const stepped = [start];
    while (stepped.length < p.fire.length + 1)
      stepped.push(nextFires(state.cron, state.timezone, stepped[stepped.length - 1], 1)[0]);
    expect(p.fire).toEqual(stepped.slice(0, -1));
    expect(p.nextFireAt).toEqual(stepped[stepped.length - 1]);
    expect(p.fire).toHaveLength(181);
  });
  for (const overlap of ["skip", "buffer_one"] as const) {
    test(`${overlap}: planned at most EXCLUSIVE_LOOKAHEAD_MS ahead, whatever the lookahead`, () => {
      // Planned a minute ahead, the second fire would meet the first still waiting and be skipped.
      const p = planFires(job({ cron: "* * * * * *", overlap, nextFireAt: at(0, 1) }), at(0), 60_000);
      expect(iso(p.fire)).toEqual(["10:00:01"]);
      expect(p.nextFireAt).toEqual(at(0, 2));
      const none = planFires(job({ cron: "* * * * * *", overlap, nextFireAt: at(0, 5) }), at(0), 60_000);
      expect(none).toEqual({ fire: [], skipped: [], nextFireAt: at(0, 5), supersede: null });
      expect(EXCLUSIVE_LOOKAHEAD_MS).toBeLessThan(5000);
    });
  }
});
