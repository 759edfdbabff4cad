// The background loop (loop.ts) on an injected clock: its sleeps, wake-ups, backoff and stop, stepped by
// hand. No timer of the runtime runs; every assertion is on what ran and what the clock says.
import { describe, expect, it } from "vitest";
import { silentLogger } from "@fairway/core";
import { exponentialBackoff, Loop, type LoopOptions, type Timers } from "../src/loop.ts";

/** A manual clock: timers fire only when advanced past their instant. */
class FakeClock implements Timers {
  now = 0;
  private timers: Array<{ at: number; fn: () => void }> = [];

  after(ms: number, fn: () => void): () => void {
    const t = { at: this.now + ms, fn };
    this.timers.push(t);
    return () => {
      this.timers = this.timers.filter((x) => x !== t);
    };
  }

  /** The sleeps set and not yet over, as their lengths from now. */
  get pending(): number[] {
    return this.timers.map((t) => t.at - this.now);
  }

  /** Move the clock on to the next timer and fire it. */
  async next(): Promise<void> {
    await settle();
    const t = this.timers.sort((a, b) => a.at - b.at).shift();
    if (!t) throw new Error("no timer set");
    this.now = t.at;
    t.fn();
    await settle();
  }
}

/** Lets every promise continuation that is ready run. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

function loop(clock: FakeClock, o: Partial<LoopOptions> & Pick<LoopOptions, "pass">) {
  const errors: string[] = [];
  const l = new Loop({
    failed: "pass failed",
    log: { ...silentLogger, error: (msg: string) => void errors.push(msg) },
    backoffMs: exponentialBackoff(1_000),
    timers: clock,
    ...o,
  });
  return { l, errors };
}

let passes = 0;
/** A pass that counts itself and asks for a sleep of `ms`. */
const count = (ms: number) => async () => {
  passes++;
  return ms;
};

describe("background loop", () => {
  it("sleeps what a pass asks between passes, and runs the next at once when it asks for 'now'", async () => {
    const clock = new FakeClock();
    const at: number[] = [];
    const asks: Array<number | "now"> = [250, "now", 100];
    const { l } = loop(clock, {
      pass: async () => {
        at.push(clock.now);
        return asks.shift() ?? 1_000;
      },
    });
    l.start();
    await settle();
    expect(at).toEqual([0]);
    expect(clock.pending).toEqual([250]);
    await clock.next();
    expect(at).toEqual([0, 250, 250]); // "now": no sleep between the second and third pass
    await clock.next();
    expect(at).toEqual([0, 250, 250, 350]);
    await l.stop();
    expect(clock.pending).toEqual([]);
  });

  it("a wake() ends the sleep at once, and one that comes during a pass ends the next sleep", async () => {
    const clock = new FakeClock();
    let passes = 0;
    let release: () => void = () => {};
    const { l } = loop(clock, {
      pass: async () => {
        passes++;
        if (passes === 2) await new Promise<void>((r) => (release = r));
        return 60_000;
      },
    });
    l.start();
    await settle();
    l.wake();
    await settle();
    expect(passes).toBe(2);
    expect(clock.now).toBe(0);
    l.wake(); // during the second pass
    release();
    await settle();
    expect(passes).toBe(3); // its sleep returned at once
    await l.stop();
  });

  it("logs a failed pass and backs off 200, 400, 800 ms, then the cap, until a pass works", async () => {
    const clock = new FakeClock();
    const at: number[] = [];
    let fail = 5;
    const { l, errors } = loop(clock, {
      pass: async () => {
        at.push(clock.now);
        if (fail-- > 0) throw new Error("postgres is away");
        return 5_000;
      },
    });
    l.start();
    for (let i = 0; i < 5; i++) await clock.next();
    expect(at).toEqual([0, 200, 600, 1_400, 2_400, 3_400]); // 1 600 is past the 1 000 cap
    expect(errors).toEqual(Array(5).fill("pass failed"));
    expect(clock.pending).toEqual([5_000]); // after a pass that worked: its own sleep, not a backoff
    await l.stop();
  });

  it("caps the doublings when asked (the executor's loop: 100 ms × 2^6 at most)", () => {
    const b = exponentialBackoff(60_000, 6);
    expect([1, 2, 6, 7, 20].map(b)).toEqual([200, 400, 6_400, 6_400, 6_400]);
    expect(exponentialBackoff(1_000)(50)).toBe(1_000);
  });

  it("stop() during a sleep ends it at once and runs no further pass", async () => {
    const clock = new FakeClock();
    passes = 0;
    const { l } = loop(clock, { pass: count(3_600_000) });
    l.start();
    await settle();
    expect(clock.pending).toEqual([3_600_000]);
    await l.stop(); // resolves with no timer fired: the clock never moved
    expect(clock.now).toBe(0);
    expect(passes).toBe(1);
    expect(clock.pending).toEqual([]);
  });

  it("stop() during a pass wakes its pause, ends the pass, and sleeps no interval after it", async () => {
    const clock = new FakeClock();
    const steps: string[] = [];
    let l!: Loop;
    ({ l } = loop(clock, {
      pass: async () => {
        for (let batch = 1; batch <= 3; batch++) {
          steps.push(`batch ${batch}`);
          if (!(await l.pause(3_600_000))) break;
        }
        return 3_600_000;
      },
    }));
    l.start();
    await settle();
    expect(steps).toEqual(["batch 1"]);
    expect(clock.pending).toEqual([3_600_000]);
    await l.stop();
    expect(steps).toEqual(["batch 1"]); // no batch after the stop
    expect(clock.now).toBe(0);
    expect(clock.pending).toEqual([]);
    expect(await l.pause(10)).toBe(false); // a pause once stopped returns at once
  });

  it("stop() while a pass runs lets it finish, then ends without a sleep", async () => {
    const clock = new FakeClock();
    let release: () => void = () => {};
    let finished = false;
    const { l } = loop(clock, {
      pass: async () => {
        await new Promise<void>((r) => (release = r));
        finished = true;
        return 60_000;
      },
    });
    l.start();
    await settle();
    let stopped = false;
    const stopping = l.stop().then(() => (stopped = true));
    await settle();
    expect(l.stopping).toBe(true);
    expect(stopped).toBe(false); // the pass under way is not cut
    release();
    await stopping;
    expect(finished).toBe(true);
    expect(clock.pending).toEqual([]);
  });

  it("starts its passes once `after` resolves, and none if stopped before", async () => {
    const clock = new FakeClock();
    let ready: () => void = () => {};
    passes = 0;
    const { l } = loop(clock, {
      pass: count(1_000),
      after: new Promise<void>((r) => (ready = r)),
    });
    l.start();
    await settle();
    expect(passes).toBe(0);
    ready();
    await settle();
    expect(passes).toBe(1);
    await l.stop();

    const c2 = loop(new FakeClock(), { pass: count(1_000), after: Promise.resolve() });
    c2.l.start();
    await c2.l.stop();
    expect(passes).toBe(1);
  });

  it("start() twice runs one loop; stop() before start() resolves at once", async () => {
    const clock = new FakeClock();
    passes = 0;
    const { l } = loop(clock, { pass: count(1_000) });
    await l.stop();
    const { l: l2 } = loop(clock, { pass: count(1_000) });
    l2.start();
    l2.start();
    await settle();
    expect(passes).toBe(1);
    expect(clock.pending).toEqual([1_000]);
    await l2.stop();
  });
});
