// Tenant-fair admission (docs/security.md, "Admission"): the API process shares what it can serve
// among tenants the way the claimer shares a pool. Each tenant with requests running or waiting has a
// weighted share of `limit` (at least MIN_SHARE); a request of a tenant under its share is let in at
// once while fewer than `maxLimit` run, so a calm tenant never waits behind a flooder's requests. A
// tenant at its share runs more only while fewer than `limit` run in all (it borrows what others leave
// idle); otherwise it waits in start-time fair order (each tenant's virtual time advances by
// 1 ÷ weight per request let in), and a tenant whose queue is full, or whose request has waited
// maxWaitMs, is answered 429 at once. `limit` follows measured latency (a gradient, as in Netflix's
// concurrency-limits) within [minLimit, maxLimit − MIN_SHARE]: the MIN_SHARE slots above it are
// kept for tenants under their share, so a low limit slows only what is borrowed. Runs the same on
// Node and Workers (plain timers and maps; one instance per process or isolate).
import { BoundedMap } from "@fairway/core";

export interface AdmissionOptions {
  /** Where the limit starts. Default 16. */
  initialLimit?: number;
  /** The limit's bounds. Default 4 and 64. maxLimit is never exceeded; the adaptive limit stays
   *  MIN_SHARE under it (the room kept for tenants under their share). */
  minLimit?: number;
  maxLimit?: number;
  /** Longest a request waits for a slot before its 429. Default 1000 ms. */
  maxWaitMs?: number;
  /** How long a latency may grow over the baseline before the limit shrinks. Default 2. */
  tolerance?: number;
  now?: () => number;
}

/** A tenant's admission counters, as /metrics shows them. */
export interface AdmissionCounts {
  admitted: number;
  queued: number;
  refused: number;
}

export interface AdmissionSnapshot {
  limit: number;
  inFlight: number;
  waiting: number;
  tenants: Array<{ tenant: string } & AdmissionCounts & { inFlight: number; waiting: number }>;
}

/** A request let in: release it when it is answered. */
export interface Ticket {
  release(): void;
}

/** A request refused: how long until the client should try again. */
export interface Refusal {
  retryAfterSec: number;
  reason: "queue_full" | "waited_too_long";
}

interface Waiter {
  resolve(r: Ticket | Refusal): void;
  timer: ReturnType<typeof setTimeout>;
}

interface Group {
  name: string;
  weight: number;
  inFlight: number;
  queue: Waiter[];
  vtime: number;
}

/** The least share of any active tenant: what a tenant may always run at once, whatever the limit
 *  and the number of tenants (bounded by maxLimit in all). */
const MIN_SHARE = 2;
/** A tenant's requests that may wait, in multiples of its share of the limit. */
const QUEUE_SHARES = 4;
/** How long a baseline latency is trusted (see observe). */
const BASELINE_WINDOW_MS = 30_000;
/** Latency under tolerance × this is never taken for congestion (a process of fast reads). */
const MIN_BASELINE_MS = 5;

/** Counters are kept for this many tenants at most (least recently seen forgotten first). */
const COUNTED_TENANTS = 1000;

export class Admission {
  private limitValue: number;
  private readonly minLimit: number;
  private readonly maxLimit: number;
  private readonly maxWaitMs: number;
  private readonly tolerance: number;
  private readonly now: () => number;
  private inFlight = 0;
  private waiting = 0;
  private readonly groups = new Map<string, Group>();
  private activeWeight = 0;
  /** The virtual time of the last request let in: a tenant that becomes active starts here. */
  private clock = 0;
  private shortRtt = 0;
  /** The baseline: the least recent latency seen in this window and the one before. */
  private minThisWindow = Number.POSITIVE_INFINITY;
  private minLastWindow = Number.POSITIVE_INFINITY;
  private windowStarted = 0;
  private readonly counts = new BoundedMap<string, AdmissionCounts>(COUNTED_TENANTS);

  constructor(opts: AdmissionOptions = {}) {
    this.minLimit = opts.minLimit ?? 4;
    this.maxLimit = Math.max(this.minLimit + MIN_SHARE, opts.maxLimit ?? 64);
    this.limitValue = Math.min(this.topLimit, Math.max(this.minLimit, opts.initialLimit ?? 16));
    this.maxWaitMs = opts.maxWaitMs ?? 1000;
    this.tolerance = opts.tolerance ?? 2;
    this.now = opts.now ?? Date.now;
  }

  get limit(): number {
    return Math.floor(this.limitValue);
  }

  /** The adaptive limit's top: MIN_SHARE under maxLimit, the room kept for tenants under their share. */
  private get topLimit(): number {
    return this.maxLimit - MIN_SHARE;
  }

  /** Whether a request of `g` may run now: under its share while fewer than maxLimit run, or (at or
   *  over its share) while fewer than the limit run. */
  private mayRun(g: Group): boolean {
    return this.inFlight < this.limit || (g.inFlight < this.share(g) && this.inFlight < this.maxLimit);
  }

  /** Lets the request in now, queues it, or refuses it. `tenant` groups requests; `weight` > 0. */
  acquire(tenant: string, weight: number): Ticket | Refusal | Promise<Ticket | Refusal> {
    const g = this.group(tenant, weight);
    // Nothing waits ahead of it in its own queue: a tenant's requests are let in in arrival order.
    if (g.queue.length === 0 && this.mayRun(g)) return this.admit(g);
    // Waiting is bounded per tenant by QUEUE_SHARES times its share: a tenant past it is refused at
    // once, not queued in front of everyone.
    if (g.queue.length >= QUEUE_SHARES * this.share(g)) return this.refuse(g, "queue_full");
    this.count(g.name).queued++;
    return new Promise((resolve) => {
      const w: Waiter = {
        resolve,
        timer: setTimeout(() => {
          const i = g.queue.indexOf(w);
          if (i === -1) return;
          g.queue.splice(i, 1);
          this.waiting--;
          this.settleGroup(g);
          resolve(this.refuse(g, "waited_too_long"));
          // A tenant that left the shares may leave room for another's waiting request.
          this.dispatch();
        }, this.maxWaitMs),
      };
      g.queue.push(w);
      this.waiting++;
    });
  }

  snapshot(): AdmissionSnapshot {
    const tenants: AdmissionSnapshot["tenants"] = [];
    for (const [tenant, c] of this.counts.entries()) {
      const g = this.groups.get(tenant);
      tenants.push({ tenant, ...c, inFlight: g?.inFlight ?? 0, waiting: g?.queue.length ?? 0 });
    }
    return { limit: this.limit, inFlight: this.inFlight, waiting: this.waiting, tenants };
  }

  private group(name: string, weight: number): Group {
    let g = this.groups.get(name);
    if (!g) {
      g = { name, weight: 0, inFlight: 0, queue: [], vtime: this.clock };
      this.groups.set(name, g);
      this.activeWeight += g.weight = weight > 0 && Number.isFinite(weight) ? weight : 1;
    } else if (g.weight !== weight && weight > 0 && Number.isFinite(weight)) {
      this.activeWeight += weight - g.weight;
      g.weight = weight;
    }
    return g;
  }

  /** The tenant's share of the limit among the tenants with requests running or waiting. */
  private share(g: Group): number {
    return Math.max(MIN_SHARE, Math.floor((this.limit * g.weight) / this.activeWeight));
  }

  private admit(g: Group): Ticket {
    g.inFlight++;
    this.inFlight++;
    g.vtime = Math.max(g.vtime, this.clock) + 1 / g.weight;
    this.clock = Math.max(this.clock, g.vtime - 1 / g.weight);
    this.count(g.name).admitted++;
    const started = this.now();
    let done = false;
    return {
      release: () => {
        if (done) return;
        done = true;
        g.inFlight--;
        this.inFlight--;
        this.observe(this.now() - started);
        this.settleGroup(g);
        this.dispatch();
      },
    };
  }

  private refuse(g: Group, reason: Refusal["reason"]): Refusal {
    this.count(g.name).refused++;
    return { retryAfterSec: Math.max(1, Math.ceil(this.maxWaitMs / 1000)), reason };
  }

  /** Lets waiting requests in while there is room: the tenant with the least virtual time first
   *  among those under their share, then (while fewer than the limit run) among all of them. */
  private dispatch(): void {
    while (this.waiting > 0 && this.inFlight < this.maxLimit) {
      let best: Group | null = null;
      let anyBest: Group | null = null;
      for (const g of this.groups.values()) {
        if (g.queue.length === 0) continue;
        if (!anyBest || g.vtime < anyBest.vtime) anyBest = g;
        if (g.inFlight < this.share(g) && (!best || g.vtime < best.vtime)) best = g;
      }
      const g = best ?? (this.inFlight < this.limit ? anyBest : null);
      if (!g) return;
      const w = g.queue.shift()!;
      this.waiting--;
      clearTimeout(w.timer);
      w.resolve(this.admit(g));
    }
  }

  /** A tenant with nothing running or waiting leaves the shares (its virtual time is dropped). */
  private settleGroup(g: Group): void {
    if (g.inFlight === 0 && g.queue.length === 0) {
      this.groups.delete(g.name);
      this.activeWeight -= g.weight;
    }
  }

  /** The gradient: the limit scaled by baseline ÷ recent latency (within [0.5, 1]) plus a little
   *  headroom, smoothed. The baseline is the least recent latency of the last one or two windows
   *  (BASELINE_WINDOW_MS), so sustained overload does not become the baseline, and a process that got
   *  slower for good is re-measured within two windows. It grows only while it is in use, so an idle
   *  process does not inflate it. */
  private observe(rttMs: number): void {
    const rtt = Math.max(0.5, rttMs);
    this.shortRtt = this.shortRtt === 0 ? rtt : this.shortRtt * 0.9 + rtt * 0.1;
    const now = this.now();
    if (now - this.windowStarted >= BASELINE_WINDOW_MS) {
      this.minLastWindow = this.minThisWindow;
      this.minThisWindow = Number.POSITIVE_INFINITY;
      this.windowStarted = now;
    }
    this.minThisWindow = Math.min(this.minThisWindow, this.shortRtt);
    const baseline = Math.max(MIN_BASELINE_MS, Math.min(this.minThisWindow, this.minLastWindow));
    const gradient = Math.max(0.5, Math.min(1, (this.tolerance * baseline) / this.shortRtt));
    const inUse = this.inFlight + 1 >= this.limitValue / 2;
    let next = this.limitValue * gradient + (inUse ? Math.sqrt(this.limitValue) : 0);
    if (!inUse) next = Math.min(next, this.limitValue);
    this.limitValue = Math.min(this.topLimit, Math.max(this.minLimit, this.limitValue * 0.9 + next * 0.1));
  }

  private count(tenant: string): AdmissionCounts {
    return this.counts.getOrSet(tenant, () => ({ admitted: 0, queued: 0, refused: 0 }));
  }
}
