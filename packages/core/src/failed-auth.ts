// Failed credentials, limited per client address. Only failures count, and a credential is checked
// before the limiter is asked: the right credential is never refused by it, so a stranger's guesses
// cannot lock the operator or a tenant out. Past the limit, a wrong credential gets a 429 with
// Retry-After instead of a 401 and no more work than a cache probe. Per process and in memory (a
// bounded map of addresses), so no store round trip is spent on failures.
import { BoundedMap } from "./bounded-map.ts";

export interface FailedAuthOptions {
  /** Failures allowed per address per window. Default 20. */
  limit?: number;
  /** The window in milliseconds. Default 60 s. */
  windowMs?: number;
  /** Addresses tracked at once (the oldest are forgotten first). Default 10,000. */
  maxAddresses?: number;
}

export class FailedAuthLimiter {
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly windows: BoundedMap<string, { count: number; resetAt: number }>;

  constructor(opts: FailedAuthOptions = {}) {
    this.limit = opts.limit ?? 20;
    this.windowMs = opts.windowMs ?? 60_000;
    this.windows = new BoundedMap(opts.maxAddresses ?? 10_000);
  }

  /** Counts one failure from `address`; the seconds to wait when it is now over the limit, else 0. */
  fail(address: string, now: number): number {
    let w = this.windows.get(address);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + this.windowMs };
      this.windows.delete(address);
      this.windows.set(address, w);
    }
    w.count++;
    return w.count > this.limit ? Math.max(1, Math.ceil((w.resetAt - now) / 1000)) : 0;
  }
}
