// The materializer: due cron fires become triggers, `lookaheadMs` ahead, on a loop of its own, so that a
// burst of due jobs is written back to back and is claimable the moment it is due. The claim loop is
// woken at each instant written (a fire written already due wakes it at once). The loop never dies (a
// failed pass is logged and retried after a backoff) and never spins.
import type { Logger } from "@fairway/core";
import { materialize, type Db } from "@fairway/store";
import type { ReadyIndex } from "./ready-index.ts";
import { Waker } from "./sleep.ts";

export interface MaterializerDeps {
  db: Db;
  ready: ReadyIndex | null;
  log: Logger;
  now: () => number;
  lookaheadMs: number;
  /** The longest backoff after failed passes. */
  maxBackoffMs: number;
  /** Wake the claim loop now, or at `atMs`. */
  wakeClaims(): void;
  wakeClaimsAt(atMs: number): void;
}

/** Rows per pass; a full pass is followed by another at once. */
const BATCH = 500;
/** Pause between passes that found less than a batch. */
const IDLE_MS = 100;

export class Materializer {
  private stopping = false;
  private done: Promise<void> | null = null;
  private waker = new Waker();
  private markCaughtUp: () => void = () => {};
  /** Resolved once a pass found less than a batch (or failed, or a long backlog took 100 full passes,
   *  or the loop stopped). Claims wait for it: after an outage the materializer decides the overdue
   *  fires written ahead (a misfire policy may skip them), and a claim taken first would run them late
   *  on top of the policy's catch-up. */
  readonly caughtUp = new Promise<void>((resolve) => (this.markCaughtUp = resolve));

  constructor(private readonly deps: MaterializerDeps) {}

  start(): void {
    this.done ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.waker.wake();
    await this.done;
  }

  private async loop(): Promise<void> {
    const { db, ready, log, now } = this.deps;
    // Instants written and not yet reached: the claim loop's timer holds only the earliest, so each
    // pass re-arms it with the next one (one entry per distinct instant in the lookahead).
    const upcoming = new Set<number>();
    let failures = 0;
    let passes = 0;
    while (!this.stopping) {
      try {
        const m = await materialize(db, new Date(now()), this.deps.lookaheadMs, BATCH);
        failures = 0;
        for (const f of m.failed) log.error("cron job paused: its schedule cannot be computed", f);
        await ready?.mark(m.ready);
        const t = now();
        let dueNow = false;
        for (const r of m.ready) {
          if (r.dueAtMs > t) upcoming.add(r.dueAtMs);
          else dueNow = true;
        }
        if (dueNow) this.deps.wakeClaims(); // written already due (late, or a catch-up)
        let next = Infinity;
        for (const at of upcoming) {
          if (at <= t) upcoming.delete(at);
          else if (at < next) next = at;
        }
        if (next < Infinity) this.deps.wakeClaimsAt(next);
        if (m.jobs >= BATCH) {
          if (++passes >= 100) this.markCaughtUp();
          continue;
        }
        this.markCaughtUp();
      } catch (err) {
        this.markCaughtUp();
        failures++;
        log.error("materializer pass failed", { err });
      }
      await this.waker.sleep(failures ? Math.min(this.deps.maxBackoffMs, 100 * 2 ** failures) : IDLE_MS);
    }
    this.markCaughtUp(); // stopped before a pass: the claim loop must not wait for one
  }
}
