// A pool: the workers for one job type (DESIGN.md §1). A Limit (limit.ts) bounds concurrency. The executor
// claims ahead (`claimable`): those triggers wait in its queue under live, renewed leases, so the next claim's
// round trip overlaps the current batch instead of leaving slots idle. Queued work holds a lease and
// leases are what caps count, so caps stay exact (actual runs can only be fewer).
//
// How far ahead is sized by Little's law: the runs a full pool finishes while one claim is under way
// (concurrency × claim time ÷ run time), twice over, so the queue outlasts a claim — with half a pool,
// a 50-slot pool of 3 ms deliveries drained its queue in 2 ms and then idled through the rest of a
// ~10 ms claim (webhooks bench). And at least what the pool finishes in QUEUE_MS, so that claims are
// big enough to pay for themselves (below). Always between half a pool and maxPrefetch(). Jobs over
// twice QUEUE_MS, and much longer than a claim, keep the half-pool queue.
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
   *  each claim takes half a queue, not just what finished during the last claim. Claiming whenever
   *  a quarter pool was free, a 50-slot pool of webhooks made claims of ~230 rows over 50 tenants,
   *  and Postgres spent 12 % more per delivery (docs/bench.md, eighth pass). A slot with nothing
   *  queued always qualifies: then claimable ≥ prefetch + 1. */
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
 *  second, unless maxPrefetch() caps its queue (jobs far shorter than a millisecond). Sized by claim
 *  time alone, a 50-slot pool of 10 ms deliveries over 50 tenants made claims of ~36 rows, and each
 *  claim's fixed and per-tenant work dominated: Postgres used 147–155 µs per delivery (249–278 µs with
 *  30 ms deliveries, claims of ~15). With this floor: claims of ~260 rows, 51–55 µs (~85 rows, 101–108
 *  µs), and the executor's own CPU fell from 61–67 to 35–37 µs (135–156 to 74–83 µs), four runs each
 *  (bench/src/studies/slow-targets.ts, docs/bench.md, sixteenth pass). What it costs: a trigger due for
 *  a tenant with nothing queued waits behind up to QUEUE_MS of queued runs (less where maxPrefetch()
 *  caps the queue), and a crashed executor's queued triggers wait for their leases to expire; they
 *  never started, so none runs twice (test/faults/kill9-prefetch.test.ts). */
export const QUEUE_MS = 100;

/** The deepest prefetch queue: 32 pools, and at most 3000 triggers beyond a half pool. Only jobs much
 *  shorter than a claim come near it: Little's law and QUEUE_MS above size the queue by time, and this
 *  bounds what very short (or misjudged) run times ask for. A 50-slot pool of ~3 ms webhook deliveries
 *  wants QUEUE_MS's ~1,650 ahead, just over the cap.
 *  - Capped at 4 pools it claimed ~120 at a time and spent most of its Postgres time on per-claim work:
 *    8.4-8.6k deliveries/s at 4, 10.2-10.6k at 8, 11.5k at 16 (webhooks bench).
 *  - At 16 its claims were ~370 rows; at 32, ~620: Postgres per delivery −10 % and deliveries/s +4 %
 *    (medians of 21 alternated pairs, 15 of them faster; docs/bench.md, nineteenth pass).
 *  - A 1000-slot pool of no-ops claims 4000 at a time under the 3000 cap (was 1000): Postgres CPU per
 *    trigger 48 → 43-44 µs.
 *  What a deeper queue costs is QUEUE_MS's: a crashed executor strands up to this many never-started
 *  triggers until their leases expire (kill9-prefetch.test.ts drills a pool at this cap). */
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
 *  service. Without it, a tenant that comes due while a busy tenant fills the queue waits behind the
 *  older part of that queue (pool.test.ts): a tenant's first trigger started 17–28 ms after it came due
 *  at the median of four runs, against 40–51 ms, next to a busy tenant that kept a 50-slot pool's queue
 *  full (bench/src/studies/fresh-tenant.ts, docs/bench.md). A tenant with virtual time of its own ahead
 *  of the clock (it was served recently) keeps its slots. `started` is read once per claim, before any
 *  of it starts: read per trigger, a claim's first triggers, started at once in free slots, would move
 *  the base for the rest of it. */
export function startKey(vt: number, vclock: number | null, started: number | null): number {
  return vclock !== null && started !== null && started < vclock ? started + (vt - vclock) : vt;
}
