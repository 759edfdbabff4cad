// The watchdog (watchdog.ts) over a real background loop (loop.ts) whose pass awaits something that
// never settles: the stall is seen once past its bound, logged once, counted, and the loop runs again;
// the abandoned pass's end, when it comes late, changes nothing.
import { describe, expect, it } from "vitest";
import { silentLogger } from "@fairway/core";
import { Loop } from "../src/loop.ts";
import { Watchdog } from "../src/watchdog.ts";

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

function logged() {
  const errors: Array<{ msg: string; fields: unknown }> = [];
  return {
    errors,
    log: { ...silentLogger, error: (msg: string, fields?: unknown) => void errors.push({ msg, fields }) },
  };
}

describe("watchdog", () => {
  it("restarts a loop whose pass never ends, once per stall, and ignores the abandoned pass", async () => {
    let passes = 0;
    let release: (() => void) | null = null;
    const loop = new Loop({
      pass: async () => {
        passes++;
        // The first pass waits for good (until released by hand, long after it was abandoned).
        if (passes === 1) await new Promise<void>((r) => (release = r));
        return 60_000;
      },
      failed: "pass failed",
      log: silentLogger,
      backoffMs: () => 10,
    });
    const { errors, log } = logged();
    const dog = new Watchdog({ log, stallMs: 5_000 });
    dog.watch("claim", loop);
    loop.start();
    await settle();
    expect(passes).toBe(1);

    dog.check(Date.now() + 1_000); // not yet a stall
    expect(dog.stalls.get("claim")).toBe(0);
    dog.check(Date.now() + 6_000);
    await settle();
    expect(dog.stalls.get("claim")).toBe(1);
    expect(passes).toBe(2); // the loop ran again
    expect(errors).toEqual([
      { msg: "executor loop stalled; restarted", fields: expect.objectContaining({ loop: "claim" }) },
    ]);
    expect(loop.lastSuccess).not.toBeNull();

    // The new run sleeps between passes: no stall, nothing logged again.
    dog.check(Date.now() + 60_000);
    expect(dog.stalls.get("claim")).toBe(1);
    // The abandoned pass ends at last: its run ends without a pass of its own.
    release!();
    await settle();
    expect(passes).toBe(2);
    await loop.stop();
  });

  it("counts a loop that stalls again after its restart as a second stall", async () => {
    let passes = 0;
    const loop = new Loop({
      pass: async () => {
        passes++;
        await new Promise(() => {}); // never
        return 0;
      },
      failed: "pass failed",
      log: silentLogger,
      backoffMs: () => 10,
    });
    const { errors, log } = logged();
    const dog = new Watchdog({ log, stallMs: 1_000 });
    dog.watch("materialize", loop);
    loop.start();
    await settle();
    dog.check(Date.now() + 2_000);
    await settle();
    expect(dog.stalls.get("materialize")).toBe(1);
    dog.check(Date.now() + 2_000); // the restarted pass's own stall, seen again: counted, restarted
    await settle();
    expect(dog.stalls.get("materialize")).toBe(2);
    expect(passes).toBe(3);
    expect(errors).toHaveLength(2);
    // The third pass never ends either: the loop is left to the end of the test process.
  });
});
