// A pool: the workers for one job type (DESIGN.md §1). p-limit bounds concurrency. The executor claims
// up to half a pool ahead (`claimable`): those triggers wait in p-limit under live, renewed leases, so
// the next claim's round trip overlaps the current batch instead of leaving slots idle. Queued work
// holds a lease and leases are what caps count, so caps stay exact (actual runs can only be fewer).
import pLimit, { type LimitFunction } from "p-limit";
import type { PoolConfig } from "@fairway/store";

export class Pool {
  private limit: LimitFunction;
  constructor(public config: PoolConfig) {
    this.limit = pLimit(config.concurrency);
  }

  get inFlight(): number {
    return this.limit.activeCount + this.limit.pendingCount;
  }

  get free(): number {
    return Math.max(0, this.config.concurrency - this.inFlight);
  }

  /** How many more triggers may be claimed now: free slots plus a queue of half the concurrency. */
  get claimable(): number {
    return Math.max(0, maxLeasesHeld(this.config.concurrency) - this.inFlight);
  }

  reconfigure(config: PoolConfig): void {
    this.config = config;
    this.limit.concurrency = config.concurrency;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.limit(fn);
  }
}

/** The most leases one executor holds for a pool: its concurrency plus the half-pool it claims ahead.
 *  A crashed executor's duplicates are bounded by this (docs/guarantees.md). */
export function maxLeasesHeld(concurrency: number): number {
  return concurrency + Math.ceil(concurrency / 2);
}
