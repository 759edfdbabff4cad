// The materializer: due cron fires become triggers, `lookaheadMs` ahead, on a loop of its own, so that a
// burst of due jobs is written back to back and is claimable the moment it is due. The claim loop is
// woken at each instant written (a fire written already due wakes it at once). A failed pass is logged
// and retried after a backoff (loop.ts).
import type { Logger } from "@fairway/core";
import { layoutOf, type Db } from "@fairway/store";
import type { ReadyIndex } from "./ready-index.ts";
import { exponentialBackoff, Loop } from "./loop.ts";

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
  readonly loop: Loop;
  private markCaughtUp: () => void = () => {};
  /** Resolved once a pass found less than a batch (or failed, or a long backlog took 100 full passes,
   *  or the loop stopped). Claims wait for it: after an outage the materializer decides the overdue
   *  fires written ahead (a misfire policy may skip them), and a claim taken first would run them late
   *  on top of the policy's catch-up. */
  readonly caughtUp = new Promise<void>((resolve) => (this.markCaughtUp = resolve));
  /** Instants written and not yet reached: the claim loop's timer holds only the earliest, so each
   *  pass re-arms it with the next one (one entry per distinct instant in the lookahead). */
  private readonly upcoming = new Set<number>();
  /** Full passes so far (a long backlog counts as caught up after 100). */
  private fullPasses = 0;

  constructor(private readonly deps: MaterializerDeps) {
    this.loop = new Loop({
      pass: () => this.pass(),
      failed: "materializer pass failed",
      log: deps.log,
      onError: () => this.markCaughtUp(),
      backoffMs: exponentialBackoff(deps.maxBackoffMs),
    });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    this.markCaughtUp(); // stopped before a pass: the claim loop must not wait for one
  }

  /** One pass; a full batch asks for the next at once. */
  private async pass(): Promise<number | "now"> {
    const { db, ready, log, now } = this.deps;
    // A tenant whose statements fail (on a Citus cluster, its node down) is logged and left for the next
    // pass: the others' fires are still written.
    const { m, found } = await (await layoutOf(db)).materialize(
      db,
      new Date(now()),
      this.deps.lookaheadMs,
      BATCH,
      (what, tenantId, err) => log.error(`materializer pass failed for a tenant (${what})`, { tenantId, err }),
    );
    for (const f of m.failed) log.error("cron job paused: its schedule cannot be computed", f);
    await ready?.mark(m.ready);
    const t = now();
    let dueNow = false;
    for (const r of m.ready) {
      if (r.dueAtMs > t) this.upcoming.add(r.dueAtMs);
      else dueNow = true;
    }
    if (dueNow) this.deps.wakeClaims(); // written already due (late, or a catch-up)
    let next = Infinity;
    for (const at of this.upcoming) {
      if (at <= t) this.upcoming.delete(at);
      else if (at < next) next = at;
    }
    if (next < Infinity) this.deps.wakeClaimsAt(next);
    if (found >= BATCH) {
      if (++this.fullPasses >= 100) this.markCaughtUp();
      return "now";
    }
    this.markCaughtUp();
    return IDLE_MS;
  }
}
