// The executor's watchdog: every background loop (claim, materialize, retention, heartbeat, renew, the
// in-doubt release) says how long its step under way has run. A step past `stallMs` awaits something
// that will not settle — every await on Postgres has its own deadline (store guarded-client.ts), so this
// is the net under everything else. The loop is restarted (the stuck step abandoned), the stall is
// logged once and counted by loop name; a loop that keeps stalling is counted at each restart.
import type { Logger } from "@fairway/core";

export interface Watched {
  /** The step under way: how long it has run (ms) and a number that no other step of the loop has;
   *  null between steps. */
  busy(now: number): { ms: number; step: number } | null;
  /** Abandon the step under way and start the loop again. */
  restart(): void;
}

export interface WatchdogOptions {
  log: Logger;
  /** A step running this long is a stall. */
  stallMs: number;
  /** How often the loops are looked at. Default a tenth of stallMs, at most 1 s. */
  everyMs?: number;
}

export class Watchdog {
  private readonly loops = new Map<string, Watched>();
  /** The step each loop was last restarted for: a step is a stall once. */
  private readonly flagged = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** Stalls seen, by loop name. */
  readonly stalls = new Map<string, number>();

  constructor(private readonly opts: WatchdogOptions) {}

  watch(name: string, loop: Watched): void {
    this.loops.set(name, loop);
    this.stalls.set(name, 0);
  }

  start(): void {
    const every = this.opts.everyMs ?? Math.min(1000, Math.max(10, this.opts.stallMs / 10));
    this.timer ??= setInterval(() => this.check(Date.now()), every);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look at every loop (the timer's; tests call it too). */
  check(now: number): void {
    for (const [name, loop] of this.loops) {
      const busy = loop.busy(now);
      if (busy === null || busy.ms < this.opts.stallMs || this.flagged.get(name) === busy.step) continue;
      this.flagged.set(name, busy.step);
      this.stalls.set(name, (this.stalls.get(name) ?? 0) + 1);
      this.opts.log.error("executor loop stalled; restarted", { loop: name, stalledMs: busy.ms });
      loop.restart();
    }
  }
}
