// Weighted fair allocation of free worker slots across tenants (docs/architecture.md).
// Start-time fair queuing: tenant i's k-th slot (k = 1..room_i) starts at virtual time
//   vtime_i + (k − 1) · costMs_i / weight_i
// and the `budget` slots with the smallest start win (ties: tenant id, then k). Charging a tenant
// costMs/weight of virtual time per trigger means shares converge to weight in *worker time*, so a
// tenant with slow jobs cannot take more of the pool than its weight. The SQL claimer implements the
// same rule; tie order on ids is plain code-unit order (Postgres COLLATE "C").
import { COST_EWMA_ALPHA } from "./defaults.ts";

export interface FairTenant {
  id: string;
  /** > 0 */
  weight: number;
  /** Virtual time already consumed (see effectiveVtime). */
  vtime: number;
  /** Estimated worker-ms per trigger, > 0. */
  costMs: number;
  /** Max it may start now = min(cap − running, rate tokens, due count), ≥ 0. */
  room: number;
}

interface Slot {
  start: number;
  id: string;
  k: number;
  tenant: number; // index into the tenants array
}

const before = (a: Slot, b: Slot) =>
  a.start < b.start || (a.start === b.start && (a.id < b.id || (a.id === b.id && a.k < b.k)));

/** Minimal binary heap: one entry per tenant (its next untaken slot), so size ≤ n. */
class SlotHeap {
  private items: Slot[] = [];
  get size() {
    return this.items.length;
  }
  push(s: Slot) {
    const h = this.items;
    h.push(s);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }
  pop(): Slot {
    const h = this.items;
    const top = h[0];
    const last = h.pop() as Slot;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l], h[m])) m = l;
        if (r < h.length && before(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

/**
 * How many triggers each tenant may start now. Work-conserving: Σ = min(budget, Σ room).
 * O((n + budget) log n); every tenant appears in the result (possibly with 0).
 */
export function allocate(budget: number, tenants: FairTenant[]): Map<string, number> {
  const result = new Map<string, number>();
  const rooms = tenants.map((t) => {
    if (!(t.weight > 0) || !(t.costMs > 0)) throw new RangeError(`tenant ${t.id}: weight and costMs must be > 0`);
    result.set(t.id, 0);
    return Math.max(0, Math.floor(t.room));
  });
  let left = Math.max(0, Math.floor(budget));
  const totalRoom = rooms.reduce((a, b) => a + b, 0);
  if (left >= totalRoom) {
    for (const [i, t] of tenants.entries()) result.set(t.id, (result.get(t.id) ?? 0) + rooms[i]);
    return result;
  }
  const heap = new SlotHeap();
  tenants.forEach((t, i) => {
    if (rooms[i] > 0) heap.push({ start: t.vtime, id: t.id, k: 1, tenant: i });
  });
  while (left > 0 && heap.size > 0) {
    const s = heap.pop();
    const t = tenants[s.tenant];
    result.set(t.id, (result.get(t.id) ?? 0) + 1);
    left--;
    // Computed from k rather than accumulated, so float error does not drift over many slots.
    if (s.k < rooms[s.tenant])
      heap.push({ start: t.vtime + (s.k * t.costMs) / t.weight, id: t.id, k: s.k + 1, tenant: s.tenant });
  }
  return result;
}

/** Virtual time to add when a tenant is given n triggers at the estimated cost. */
export function chargeFor(n: number, costMs: number, weight: number): number {
  return (n * costMs) / weight;
}

/** On settle: correct the charge by what the attempt really used (may be negative). */
export function correctionFor(actualMs: number, estimatedMs: number, weight: number): number {
  return (actualMs - estimatedMs) / weight;
}

/** Exponentially weighted moving average, for the per-tenant cost estimate. */
export function ewma(prev: number, sample: number, alpha = COST_EWMA_ALPHA): number {
  return prev + alpha * (sample - prev);
}

/** A tenant returning from idle starts at the pool clock: no banked credit, no burst. */
export function effectiveVtime(vtime: number, poolClock: number): number {
  return Math.max(vtime, poolClock);
}
