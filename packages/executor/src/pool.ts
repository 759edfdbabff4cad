// A pool: the workers for one job type. A Limit (limit.ts) bounds concurrency. The executor claims
// ahead (`claimable`): those triggers wait in its queue under live, renewed leases, so the next claim's
// round trip overlaps the current runs instead of leaving slots idle. Queued work holds a lease and
// leases are what caps count, so caps stay exact (actual runs can only be fewer).
//
// How far ahead is sized by Little's law: twice the runs a full pool finishes while one claim is under
// way (concurrency × claim time ÷ run time), so the queue outlasts a claim; at least what the pool
// finishes in QUEUE_MS, so claims are big enough to pay for themselves; always between half a pool and
// maxPrefetch() (docs/decisions/0020-prefetch-queue.md).
import { Limit } from "./limit.ts";
import type { PoolConfig } from "@fairway/store";

/** Weight of the newest sample in the running averages. */
const EWMA = 0.2;

export class Pool {
  private limit: Limit;
  private runMs: number | null = null;
  private claimMs: number | null = null;

  constructor(public config: PoolConfig) {
    this.limit = new Limit(config.concurrency);
  }

  get inFlight(): number {
    return this.limit.activeCount + this.limit.pendingCount;
  }

  /** Triggers claimed ahead of free slots. */
  get prefetch(): number {
    const c = this.config.concurrency;
    const half = Math.ceil(c / 2);
    if (this.runMs === null || this.claimMs === null) return half; // nothing measured yet
    const runMs = Math.max(this.runMs, 0.1);
    const finishedDuringClaim = (c * this.claimMs) / runMs;
    const finishedInQueueMs = (c * QUEUE_MS) / runMs;
    return Math.min(maxPrefetch(c), Math.max(half, Math.ceil(2 * finishedDuringClaim), Math.ceil(finishedInQueueMs)));
  }

  /** How many more triggers may be claimed now: free slots plus the prefetch queue. */
  get claimable(): number {
    return Math.max(0, this.config.concurrency + this.prefetch - this.inFlight);
  }

  /** Whether a claim is worth making now: once half the prefetch queue has drained. The half still
   *  queued outlasts the claim (prefetch is twice what finishes during one), so no slot idles; and
   *  each claim takes half a queue, not just what finished during the last one, so claims stay large.
   *  A slot with nothing queued always qualifies: then claimable ≥ prefetch + 1. An at-cap tenant
   *  does not wait for this cadence (claimer.ts, hand-off). */
  get wantsClaim(): boolean {
    return this.claimable >= Math.max(1, Math.ceil(this.prefetch / 2));
  }

  /** A run took `ms` (handler or delivery time). */
  recordRun(ms: number): void {
    this.runMs = this.runMs === null ? ms : this.runMs + EWMA * (ms - this.runMs);
  }

  /** A claim for this pool took `ms`, round trip included. */
  recordClaim(ms: number): void {
    this.claimMs = this.claimMs === null ? ms : this.claimMs + EWMA * (ms - this.claimMs);
  }

  reconfigure(config: PoolConfig): void {
    this.config = config;
    this.limit.setConcurrency(config.concurrency);
  }

  /** The slot of the run started last (startKey()); null before the first. */
  get lastStarted(): number | null {
    return this.limit.lastStartedKey;
  }

  /** Run `task` in a slot: at once if one is free, else once one is and nothing queued has an earlier
   *  key (limit.ts). The executor keys a claimed trigger by startKey(); tasks given no key run in the
   *  order they came, as if all at 0. */
  run(task: () => Promise<unknown>, key = 0): void {
    this.limit.run(task, key);
  }
}

/** The least work a pool queues ahead, in milliseconds of its runs. A claim is made once half the queue
 *  has drained, so each claim takes at least half of this: a busy pool claims at most ~20 times a
 *  second, unless maxPrefetch() caps its queue. What it costs: a trigger due for a tenant with nothing
 *  queued waits behind up to QUEUE_MS of queued runs, less where its virtual time puts it ahead
 *  (startKey), and a crashed executor's queued triggers wait for their leases to expire; they never
 *  started, so none runs twice (test/faults/kill9-prefetch.test.ts). */
export const QUEUE_MS = 100;

/** The deepest prefetch queue: 32 pools, and at most 3000 triggers beyond a half pool. Only jobs much
 *  shorter than a claim come near it; it bounds what very short (or misjudged) run times ask for, and
 *  what a crashed executor strands until its leases expire (kill9-prefetch.test.ts drills a pool at
 *  this cap). */
function maxPrefetch(concurrency: number): number {
  return Math.max(Math.ceil(concurrency / 2), Math.min(32 * concurrency, 3000));
}

/** The most leases one executor holds for a pool: its concurrency plus the deepest prefetch queue. A
 *  crashed executor's duplicates are bounded by its runs in flight (queued triggers never started), and
 *  its leases by this (docs/guarantees.md). */
export function maxLeasesHeld(concurrency: number): number {
  return concurrency + maxPrefetch(concurrency);
}

/** When a claimed trigger starts, among what its pool has queued: at its WFQ slot `vt`, unless its tenant's
 *  slots started at the pool clock `vclock` (ClaimedTrigger.vclock: new, or back from idle). The clock
 *  is where the claims have got to, and runs ahead of `started` (the slot this pool started last) by the
 *  queue's depth: such a tenant's slots move back by the difference, to start among what is starting
 *  now. Start-time fair queuing's rule: a flow that becomes backlogged starts at the virtual time in
 *  service, not behind the older part of a busy tenant's queue (pool.test.ts). A tenant with virtual
 *  time of its own ahead of the clock (it was served recently) keeps its slots. `started` is read once
 *  per claim, before any of it starts: read per trigger, a claim's first triggers, started at once in
 *  free slots, would move the base for the rest of it. */
export function startKey(vt: number, vclock: number | null, started: number | null): number {
  return vclock !== null && started !== null && started < vclock ? started + (vt - vclock) : vt;
}
