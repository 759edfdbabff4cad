// The per-tenant layout's budget split (store layout/per-tenant.ts): a claim there is for one tenant,
// on its shard alone, so no statement sees the pool's tenants together to share its budget by weight.
// The executor shares it instead, from what each tenant's claims returned: the WFQ slot (vt) of every
// claimed trigger says where a tenant's next slot starts and how far apart its slots are (cost ÷
// weight). Shares come out right because the pool starts what it holds in the order of those slots
// (pool.ts, startKey). It also keeps the pool clock, which the claim across tenants moves in its own
// statement: the least slot a pass's claims started at, written at most every CLOCK_WRITE_MS.
import { allocate, DEFAULT_COST_MS, type Logger } from "@fairway/core";
import {
  advancePoolClock,
  type ClaimedTrigger,
  type ClaimReport,
  type Db,
  type TenantShares as Shares,
} from "@fairway/store";

/** How often at most a pool's clock is written (a write on every node of a cluster). */
const CLOCK_WRITE_MS = 1000;
/** How long a tenant whose claim got nothing (at its cap, out of rate tokens) is left out of the split,
 *  as the ready index sets it aside (ReadyIndex.snoozeMs). A settle that frees its slot claims for it
 *  in the settle's transaction meanwhile. */
const EMPTY_SNOOZE_MS = 250;
/** How long a tenant whose claim failed (its node down, say) is left out: the other tenants' claims go
 *  on meanwhile, and it is tried again after. */
const FAILED_SNOOZE_MS = 1000;

/** What is known of a tenant's WFQ slots in a pool: where its next slot starts and the step between
 *  its slots (cost ÷ weight). */
interface TenantSlots {
  next: number;
  step: number;
}

export class TenantShares implements Shares {
  /** Per pool, its tenants' slots as their last claims left them. */
  private readonly slots = new Map<string, Map<string, TenantSlots>>();
  /** Per pool, tenants set aside until the time given. */
  private readonly snoozed = new Map<string, Map<string, number>>();
  /** Per pool, the clock its per-tenant claims started at (the least vstart of a pass's claims, the
   *  greatest over passes), what was last written, and when. */
  private readonly clocks = new Map<string, { v: number; written: number; at: number }>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** The budget over the candidate tenants by weighted fair share (core allocate()): a tenant's next
   *  slot starts where its last claim's slots ended, and steps by cost ÷ weight; one not seen yet starts
   *  at the pool clock, stepping as the median tenant. Each tenant's room is unknown here (its cap and
   *  backlog are read by its claim): a share it cannot use is claimed on the next pass, which runs at
   *  once (the claimer reports work). Tenants whose last claim got nothing are left out a moment. */
  split(type: string, budget: number, now: number, tenantIds: string[]): Map<string, number> {
    const known = this.slots.get(type);
    const snoozed = this.snoozed.get(type);
    const ids = tenantIds.filter((id) => (snoozed?.get(id) ?? 0) <= now);
    if (ids.length === 0) return new Map();
    const clock = this.clocks.get(type)?.v ?? 0;
    // A step of 0 is one not known yet (a tenant's claims so far took one trigger each).
    const steps = [...(known?.values() ?? [])]
      .map((s) => s.step)
      .filter((x) => x > 0)
      .sort((a, b) => a - b);
    const step = steps.length > 0 ? steps[steps.length >> 1] : DEFAULT_COST_MS;
    return allocate(
      budget,
      ids.map((id) => {
        const s = known?.get(id);
        return { id, weight: 1, costMs: s?.step || step, vtime: Math.max(s?.next ?? clock, clock), room: budget };
      }),
    );
  }

  claimed(type: string, tenantId: string, report: ClaimReport, now: number): void {
    this.learn(type, tenantId, report.claimed);
    if (report.claimed.length === 0 && report.busy.length === 0) this.snooze(type, tenantId, now, EMPTY_SNOOZE_MS);
  }

  failed(type: string, tenantId: string, now: number): void {
    this.snooze(type, tenantId, now, FAILED_SNOOZE_MS);
  }

  passed(type: string, claimed: ClaimedTrigger[], now: number): void {
    this.noteClock(type, claimed);
    this.advanceClock(type, now);
  }

  /** A tenant's slots after a claim: its last slot and the step (from two slots, or as before). */
  private learn(type: string, tenantId: string, claimed: ClaimedTrigger[]): void {
    if (claimed.length === 0) return;
    let known = this.slots.get(type);
    if (!known) this.slots.set(type, (known = new Map()));
    const vts = claimed.map((c) => c.vt).sort((a, b) => a - b);
    const step = vts.length > 1 ? vts[1]! - vts[0]! : (known.get(tenantId)?.step ?? 0);
    known.delete(tenantId); // re-inserted last: the oldest are dropped first
    known.set(tenantId, { next: vts[vts.length - 1]! + step, step });
    // Bounded: a tenant forgotten starts at the clock, as one back from idle does in the claim.
    for (const id of known.keys()) {
      if (known.size <= 10_000) break;
      known.delete(id);
    }
  }

  private snooze(type: string, tenantId: string, now: number, ms: number): void {
    let m = this.snoozed.get(type);
    if (!m) this.snoozed.set(type, (m = new Map()));
    m.set(tenantId, now + ms);
    if (m.size > 1000) for (const [id, until] of m) if (until <= now) m.delete(id);
  }

  /** The least slot a pass's per-tenant claims started at: where the claim across tenants moves the
   *  pool clock to (store claim.ts, CTE "clock"). */
  private noteClock(type: string, claimed: ClaimedTrigger[]): void {
    if (claimed.length === 0) return;
    const v = Math.min(...claimed.map((c) => c.vt));
    const c = this.clocks.get(type);
    if (!c) this.clocks.set(type, { v, written: -Infinity, at: -Infinity });
    else if (v > c.v) c.v = v;
  }

  /** The pool clock written, out of any claim's transaction and at most every CLOCK_WRITE_MS: pools
   *  is a reference table on a cluster, and a write to it is a transaction on every node, which a
   *  claim must not wait for nor fail with. A failed write (a node down) is retried after that;
   *  meanwhile the clock lags, and a tenant back from idle starts from an older clock, with credit it
   *  should not have — fairness degrades for those, caps do not. */
  private advanceClock(type: string, now: number): void {
    const c = this.clocks.get(type);
    if (!c || c.v <= c.written || now - c.at < CLOCK_WRITE_MS) return;
    c.at = now;
    const v = c.v;
    advancePoolClock(this.db, type, v).then(
      () => void (c.written = Math.max(c.written, v)),
      (err) => this.log.debug("pool clock not advanced", { err, type }),
    );
  }
}
