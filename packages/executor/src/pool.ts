// A pool: the workers for one job type (DESIGN.md §1). p-limit bounds concurrency; the executor only
// claims as many triggers as the pool has free slots, so nothing waits inside p-limit for long.
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

  reconfigure(config: PoolConfig): void {
    this.config = config;
    this.limit.concurrency = config.concurrency;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.limit(fn);
  }
}
