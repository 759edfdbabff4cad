// A background loop — the heartbeat, the materializer, retention and the executor's claim loop: passes
// one after another with a sleep between them that wake() or stop() ends at once. It never dies (a
// failed pass is logged and followed by a backoff) and never spins (it sleeps unless a pass asks for
// the next one at once). stop() lets the pass under way finish — a pass that pauses (pause()) or reads
// `stopping` ends sooner — and resolves once the loop has ended; it never sleeps after a stop().

import type { Logger } from "@fairway/core";

/** Timers, injected by tests; by default the runtime's. */
export interface Timers {
  /** Calls `fn` once after `ms`; returns a cancel. */
  after(ms: number, fn: () => void): () => void;
}

const realTimers: Timers = {
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

export interface LoopOptions {
  /** One pass; resolves to how long to sleep before the next, or "now" for the next at once. */
  pass: () => Promise<number | "now">;
  /** Logged at error, with the error, when a pass throws. */
  failed: string;
  log: Logger;
  /** The sleep after the n-th failed pass in a row (n ≥ 1). */
  backoffMs: (failures: number) => number;
  /** Called with each error a pass threw, before the backoff. */
  onError?: (err: unknown) => void;
  /** Passes start once this resolves; none starts if stop() came first. */
  after?: Promise<unknown>;
  timers?: Timers;
}

/** 100 ms doubled with each failure in a row (at most `maxDoublings` times), never past `maxMs`. */
export const exponentialBackoff =
  (maxMs: number, maxDoublings = Number.POSITIVE_INFINITY) =>
  (failures: number): number =>
    Math.min(maxMs, 100 * 2 ** Math.min(failures, maxDoublings));

export class Loop {
  private readonly waker: Waker;
  private stopped = false;
  private done: Promise<void> | null = null;

  constructor(private readonly opts: LoopOptions) {
    this.waker = new Waker(opts.timers ?? realTimers);
  }

  /** stop() was called: a pass should end before its next step. */
  get stopping(): boolean {
    return this.stopped;
  }

  start(): void {
    this.done ??= this.run();
  }

  /** Ends the sleep under way, or the next one if none is (a wake-up is never lost). */
  wake(): void {
    this.waker.wake();
  }

  /** A pause inside a pass, of up to `ms`, that stop() or wake() ends at once. False once stopping:
   *  the pass should end. */
  async pause(ms: number): Promise<boolean> {
    if (this.stopped) return false;
    await this.waker.sleep(ms);
    return !this.stopped;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.waker.wake();
    await this.done;
  }

  private async run(): Promise<void> {
    await this.opts.after;
    let failures = 0;
    while (!this.stopped) {
      let next: number | "now";
      try {
        next = await this.opts.pass();
        failures = 0;
      } catch (err) {
        failures++;
        this.opts.onError?.(err);
        this.opts.log.error(this.opts.failed, { err });
        next = this.opts.backoffMs(failures);
      }
      // A stop() during the pass may have woken one of its pauses: no sleep now.
      if (next !== "now" && !this.stopped) await this.waker.sleep(next);
    }
  }
}

/** An interruptible sleep: the loop never spins and never oversleeps a wake-up. */
class Waker {
  private resolve: (() => void) | null = null;
  private woken = false;

  constructor(private readonly timers: Timers) {}

  /** Sleep up to ms, or until wake() — including a wake() that arrived while not sleeping. */
  sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let cancel = () => {};
      const done = () => {
        cancel();
        this.resolve = null;
        this.woken = false;
        resolve();
      };
      cancel = this.timers.after(ms, done);
      this.resolve = done;
    });
  }

  wake(): void {
    if (this.resolve) this.resolve();
    else this.woken = true;
  }
}
