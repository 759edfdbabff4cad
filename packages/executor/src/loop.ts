// A background loop — the heartbeat, the materializer, retention and the executor's claim loop: passes
// one after another with a sleep between them that wake() or stop() ends at once. It never dies (a
// failed pass is logged and followed by a backoff) and never spins (it sleeps unless a pass asks for
// the next one at once). stop() lets the pass under way finish — a pass that pauses (pause()) or reads
// `stopping` ends sooner — and resolves once the loop has ended; it never sleeps after a stop().
// A pass that never ends (an await that never settles) is noticed by the executor's watchdog
// (watchdog.ts) through busy() and abandoned by restart(): a new run starts and the old pass's end,
// if it ever comes, is ignored.

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
  /** Bumped by restart(): a run of an older generation ends at its next step. */
  private generation = 0;
  private passStartedAt: number | null = null;
  /** Passes started, ever (the watchdog tells one pass from the next by it). */
  private passes = 0;
  private lastSuccessAt: number | null = null;

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

  /** The pass under way: how long it has run (ms) and its number; null between passes. */
  busy(now: number): { ms: number; step: number } | null {
    return this.passStartedAt === null ? null : { ms: now - this.passStartedAt, step: this.passes };
  }

  /** When the last pass that did not throw ended (Date.now() ms), or null before the first. */
  get lastSuccess(): number | null {
    return this.lastSuccessAt;
  }

  /** Abandon the pass under way (it never ended) and start the loop again. */
  restart(): void {
    if (this.stopped || this.done === null) return;
    this.generation++;
    this.passStartedAt = null;
    this.done = this.run();
  }

  private async run(): Promise<void> {
    const generation = this.generation;
    await this.opts.after;
    let failures = 0;
    while (!this.stopped && generation === this.generation) {
      let next: number | "now";
      this.passStartedAt = Date.now();
      this.passes++;
      try {
        next = await this.opts.pass();
        if (generation !== this.generation) return;
        failures = 0;
        this.lastSuccessAt = Date.now();
      } catch (err) {
        if (generation !== this.generation) return;
        failures++;
        this.opts.onError?.(err);
        this.opts.log.error(this.opts.failed, { err });
        next = this.opts.backoffMs(failures);
      }
      this.passStartedAt = null;
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
