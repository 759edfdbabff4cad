// The claimer: each pass claims, for every pool with room, its fair share of due work (store claim.ts)
// and hands it to the pool, which starts it in WFQ order (pool.ts, startKey).
//
// A pool claims ahead of its free slots, once half its queue has drained (Pool.wantsClaim), so that
// claims are few and large. A tenant at its in-flight cap does not wait for that cadence: the cap
// counts running rows, so its slot frees when one of its runs is settled, and the settle claims for
// it in the same transaction, as many as it freed, if the pool has room (handOff(), store hand-off.ts).
// A claim that takes a tenant to its cap has its next triggers claimed on standby at once (reachedCap).
//
// On a Citus cluster (docs/scaling.md) a claim is for one tenant, on its shard alone: the claimer picks
// the tenants (the ready index, else one read of the queue), splits the pool's budget over them by
// weighted fair share, claims for each (a few at once, each its own one-round-trip transaction) and
// moves the pool clock on itself (advanceClocks). Caps stay exact: each claim locks its tenant and
// reads its running count after the lock, as the claim across tenants does. Shares come out right
// because the pool starts what it holds in the order of each trigger's WFQ slot (vt), which every
// per-tenant claim returns.
import { allocate, DEFAULT_COST_MS, type Logger } from "@fairway/core";
import {
  advancePoolClock,
  claimReport,
  dueTenants,
  isDistributed,
  type ClaimedTrigger,
  type ClaimInput,
  type ClaimReport,
  type Db,
} from "@fairway/store";
import type { InDoubtClaims } from "./in-doubt.ts";
import type { ExecutorObserver } from "./observe.ts";
import { startKey, type Pool } from "./pool.ts";
import { eachTenant } from "./per-tenant.ts";
import type { ReadyIndex } from "./ready-index.ts";

export interface ClaimerDeps {
  db: Db;
  owner: string;
  pools: Map<string, Pool>;
  ready: ReadyIndex | null;
  log: Logger;
  /** Hand a claimed trigger to its pool, to start at `key` among what the pool has queued. */
  dispatch(pool: Pool, t: ClaimedTrigger, key: number): void;
  stats: { claimed: number };
  /** Claims that failed: they may have committed, and are released by their tokens. */
  inDoubt: Pick<InDoubtClaims, "send">;
  /** Metrics: each claim's duration and size. */
  observer?: Pick<ExecutorObserver, "claimed">;
  /** Tenants a claim took to their in-flight cap (their next triggers can go on standby); `perTenant`
   *  on a Citus cluster: the standby claims are to be made per tenant (StandbySlots.afterClaim). */
  reachedCap?(type: string, tenantIds: string[], perTenant?: boolean): void;
}

/** How often at most the claimer writes a pool's clock (a write on every node of a cluster). */
const CLOCK_WRITE_MS = 1000;
/** How long a tenant whose claim got nothing (at its cap, out of rate tokens) is left out of the split,
 *  as the ready index sets it aside (ReadyIndex.snoozeMs). A settle that frees its slot claims for it
 *  in the settle's transaction meanwhile. */
const EMPTY_SNOOZE_MS = 250;
/** How long a tenant whose claim failed (its node down, say) is left out: the other tenants' claims go
 *  on meanwhile, and it is tried again after. */
const FAILED_SNOOZE_MS = 1000;

/** What the claimer has learned of a tenant's WFQ slots in a pool from its claims: where its next slot
 *  starts and the step between its slots (cost ÷ weight). */
interface TenantSlots {
  next: number;
  step: number;
}

export class Claimer {
  /** Per pool, its tenants' slots as their last claims left them (splitBudget). */
  private readonly slots = new Map<string, Map<string, TenantSlots>>();
  /** Per pool, tenants set aside until the time given (EMPTY_SNOOZE_MS). */
  private readonly snoozed = new Map<string, Map<string, number>>();
  /** Per pool, the clock its per-tenant claims started at (the least vstart of a pass's claims, the
   *  greatest over passes), what was last written, and when. */
  private readonly clocks = new Map<string, { v: number; written: number; at: number }>();
  private distributed = false;

  constructor(private readonly deps: ClaimerDeps) {}

  /** The claims a settle makes for the at-cap tenants it frees: per pool with room, as many as were
   *  freed (at most its room), among exactly those tenants. A slot freed by a keyed trigger at its cap
   *  is claimed even when the pool's queue is full: no standby trigger waits for it (store standby.ts),
   *  the key has nothing else to refill it, and what the claim gets starts at the front of the queue
   *  (claim-keys.ts, capsFirst). The queue grows by at most the freed key slots. */
  handOff(freed: Array<{ type: string; tenantId: string; key?: string | null }>): ClaimInput[] {
    const byType = new Map<string, Map<string, number>>();
    const keyed = new Map<string, number>();
    for (const r of freed) {
      const m = byType.get(r.type) ?? new Map<string, number>();
      m.set(r.tenantId, (m.get(r.tenantId) ?? 0) + 1);
      byType.set(r.type, m);
      if (r.key != null) keyed.set(r.type, (keyed.get(r.type) ?? 0) + 1);
    }
    const inputs: ClaimInput[] = [];
    for (const [type, tenants] of byType) {
      const pool = this.deps.pools.get(type);
      const n = [...tenants.values()].reduce((a, b) => a + b, 0);
      const budget = Math.min(n, Math.max(pool?.claimable ?? 0, pool ? (keyed.get(type) ?? 0) : 0));
      if (pool && budget > 0)
        inputs.push({
          type,
          budget,
          owner: this.deps.owner,
          leaseMs: pool.config.leaseMs,
          candidates: [...tenants.keys()],
        });
    }
    return inputs;
  }

  /** What a hand-off claim got: dispatched like any claim's. Returns whether another claim held one
   *  of its tenants: that claim may have read the tenant's running count before this settle committed
   *  and left the freed slot unclaimed, so the caller should claim again now. */
  handedOff(input: ClaimInput, report: ClaimReport): boolean {
    const pool = this.deps.pools.get(input.type);
    if (pool && report.claimed.length > 0) {
      this.deps.stats.claimed += report.claimed.length;
      this.dispatchAll(pool, report.claimed);
      if (this.distributed) {
        this.learn(input.type, report.claimed);
        this.noteClock(input.type, report.claimed);
      }
    }
    return report.busy.length > 0;
  }

  /** One pass over the pools; returns how many pools claimed something (then the caller claims again
   *  at once while slots are free: a claim looks at a bounded part of each tenant's backlog, so a
   *  short claim does not mean the backlog is empty). */
  async pass(now: number): Promise<number> {
    let work = 0;
    this.distributed = await isDistributed(this.deps.db);
    for (const [type, pool] of this.deps.pools) {
      if (!pool.wantsClaim) continue;
      const budget = pool.claimable;
      const { claimed, busy } = this.distributed
        ? await this.claimPerTenant(type, pool, now, budget)
        : await this.claimFor(type, pool, now, budget);
      // Also when it came short because another claim held tenants it would have served: that claim
      // is about to commit, and this one takes its share then rather than after an idle poll.
      if (claimed.length > 0 || (busy.length > 0 && claimed.length < budget)) work++;
    }
    if (this.distributed) this.advanceClocks(now);
    return work;
  }

  /** Claim up to `budget` for `pool` and dispatch what was claimed. */
  private async claimFor(
    type: string,
    pool: Pool,
    now: number,
    budget: number,
  ): Promise<{ claimed: ClaimedTrigger[]; busy: string[] }> {
    const { ready } = this.deps;
    const candidates = ready ? await ready.candidates(type, now, budget) : undefined;
    if (candidates && candidates.length === 0) return { claimed: [], busy: [] }; // nothing due: no query at all
    const claimStarted = performance.now();
    const { claimed, busy } = await this.claim({
      type,
      budget,
      owner: this.deps.owner,
      leaseMs: pool.config.leaseMs,
      candidates: candidates?.map((c) => c.tenantId),
    });
    await this.afterClaims({ type, pool, now, started: claimStarted, candidates, claimed, budget, busy });
    this.dispatchAll(pool, claimed);
    this.toStandby(type, claimed, false);
    return { claimed, busy };
  }

  /** After a pass's claims for a pool: the counts, and the ready index told what they got (`candidates`
   *  are those the claims were for, from the index; without them the claimed tenants are marked). */
  private async afterClaims(c: {
    type: string;
    pool: Pool;
    now: number;
    started: number;
    candidates: Array<{ tenantId: string; dueAtMs: number }> | undefined;
    claimed: ClaimedTrigger[];
    budget: number;
    busy: string[];
  }): Promise<void> {
    const { type, claimed } = c;
    this.deps.stats.claimed += claimed.length;
    if (claimed.length > 0) c.pool.recordClaim(performance.now() - c.started);
    this.deps.observer?.claimed?.(type, performance.now() - c.started, claimed.length);
    const { ready } = this.deps;
    if (c.candidates) await ready!.afterClaim(type, c.now, c.candidates, claimed, c.budget, c.busy);
    else await ready?.mark(claimed.map((t) => ({ type, tenantId: t.tenantId, dueAtMs: c.now })));
  }

  /** Standby is for tenants at their own cap; a key at its cap is refilled by its settle's hand-off
   *  claim (store standby.ts). */
  private toStandby(type: string, claimed: ClaimedTrigger[], perTenant: boolean): void {
    const atCap = new Set(claimed.filter((c) => c.atCap && c.key === null).map((c) => c.tenantId));
    if (atCap.size > 0) this.deps.reachedCap?.(type, [...atCap], perTenant);
  }

  /** claimFor() on a Citus cluster: a claim per tenant, for its share of the budget (splitBudget). */
  private async claimPerTenant(
    type: string,
    pool: Pool,
    now: number,
    budget: number,
  ): Promise<{ claimed: ClaimedTrigger[]; busy: string[] }> {
    const { db, ready } = this.deps;
    const indexed = ready ? await ready.candidates(type, now, budget) : undefined;
    // Without a ready index (or on its periodic sweep), one read of the queue: it reads every shard of
    // the cluster, once per pass and pool, never once per tenant. The ready index costs no Postgres
    // query at all: prefer it on a cluster.
    let candidates = indexed;
    if (!candidates) {
      try {
        candidates = (await dueTenants(db, type, Math.max(64, 4 * budget))).map((tenantId) => ({
          tenantId,
          dueAtMs: now,
        }));
      } catch (err) {
        // A node down fails every read of all shards. With a ready index this was its periodic sweep:
        // the index goes on choosing the tenants, so the other nodes' tenants go on.
        if (!ready) throw err;
        this.deps.log.warn("the sweep's read of the queue failed; claims go on from the ready index", { err });
        return { claimed: [], busy: [] };
      }
    }
    if (candidates.length === 0) return { claimed: [], busy: [] };
    const shares = [
      ...this.splitBudget(
        type,
        budget,
        now,
        candidates.map((c) => c.tenantId),
      ),
    ].filter(([, n]) => n > 0);
    const claimStarted = performance.now();
    const claimed: ClaimedTrigger[] = [];
    const busy: string[] = [];
    const failed = new Map<string, unknown>();
    await eachTenant(new Map(shares.map(([tenantId, n]) => [tenantId, [n]])), async (tenantId, [n]) => {
      try {
        const r = await this.claim({
          type,
          budget: n!,
          owner: this.deps.owner,
          leaseMs: pool.config.leaseMs,
          tenantId,
        });
        claimed.push(...r.claimed);
        busy.push(...r.busy);
        this.learn(type, r.claimed);
        if (r.claimed.length === 0 && r.busy.length === 0) this.snooze(type, tenantId!, now);
        this.dispatchAll(pool, r.claimed);
      } catch (err) {
        failed.set(tenantId!, err);
        this.snooze(type, tenantId!, now, FAILED_SNOOZE_MS);
      }
    });
    this.noteClock(type, claimed);
    const asked = new Set(shares.map(([tenantId]) => tenantId));
    await this.afterClaims({
      type,
      pool,
      now,
      started: claimStarted,
      // Told of the tenants claimed for, and of the budget they were given.
      // A tenant whose claim failed stays in the index as it was.
      candidates: indexed?.filter((c) => asked.has(c.tenantId) && !failed.has(c.tenantId)),
      claimed,
      budget: shares.reduce((a, [, n]) => a + n, 0),
      busy,
    });
    this.toStandby(type, claimed, true);
    // One tenant's failure (its node down) must not hold the others back: it is logged and the tenant
    // set aside a moment. Only when every claim failed (the coordinator, or Postgres, away) is the
    // error the loop's, which backs off.
    const [firstError] = failed.values();
    if (failed.size > 0 && failed.size === shares.length) throw firstError;
    if (failed.size > 0)
      this.deps.log.warn("claims failed for some tenants; the others' went on", {
        err: firstError,
        tenants: failed.size,
      });
    return { claimed, busy };
  }

  /** A claim under a token of its own; one that failed is noted in doubt (it may have committed). */
  private claim(input: ClaimInput): Promise<ClaimReport> {
    return this.deps.inDoubt.send(input, (sent) => claimReport(this.deps.db, sent));
  }

  /** The budget over the candidate tenants by weighted fair share (core allocate()), from what their
   *  claims returned: a tenant's next slot starts where its last claim's slots ended, and steps by
   *  cost ÷ weight; one not seen yet starts at the pool clock, stepping as the median tenant. Each
   *  tenant's room is unknown here (its cap and backlog are read by its claim): a share it cannot use
   *  is claimed on the next pass, which runs at once (pass() reports work). Tenants whose last claim
   *  got nothing are left out a moment (EMPTY_SNOOZE_MS). */
  splitBudget(type: string, budget: number, now: number, tenantIds: string[]): Map<string, number> {
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

  /** A tenant's slots after a claim: its last slot and the step (from two slots, or as before). */
  private learn(type: string, claimed: ClaimedTrigger[]): void {
    if (claimed.length === 0) return;
    let known = this.slots.get(type);
    if (!known) this.slots.set(type, (known = new Map()));
    const byTenant = new Map<string, number[]>();
    for (const c of claimed) {
      const vts = byTenant.get(c.tenantId) ?? [];
      vts.push(c.vt);
      byTenant.set(c.tenantId, vts);
    }
    for (const [tenantId, vts] of byTenant) {
      vts.sort((a, b) => a - b);
      const step = vts.length > 1 ? vts[1] - vts[0] : (known.get(tenantId)?.step ?? 0);
      known.delete(tenantId); // re-inserted last: the oldest are dropped first
      known.set(tenantId, { next: vts[vts.length - 1] + step, step });
    }
    // Bounded: a tenant forgotten starts at the clock, as one back from idle does in the claim.
    for (const id of known.keys()) {
      if (known.size <= 10_000) break;
      known.delete(id);
    }
  }

  private snooze(type: string, tenantId: string, now: number, ms = EMPTY_SNOOZE_MS): void {
    let m = this.snoozed.get(type);
    if (!m) this.snoozed.set(type, (m = new Map()));
    m.set(tenantId, now + ms);
    if (m.size > 1000) for (const [id, until] of m) if (until <= now) m.delete(id);
  }

  /** The least slot a pass's per-tenant claims started at: where the claim across tenants moves the
   *  pool clock to (claim.ts, CTE "clock"). */
  private noteClock(type: string, claimed: ClaimedTrigger[]): void {
    if (claimed.length === 0) return;
    const v = Math.min(...claimed.map((c) => c.vt));
    const c = this.clocks.get(type);
    if (!c) this.clocks.set(type, { v, written: -Infinity, at: -Infinity });
    else if (v > c.v) c.v = v;
  }

  /** The pool clocks written, out of any claim's transaction and at most every CLOCK_WRITE_MS per
   *  pool: pools is a reference table on a cluster, and a write to it is a transaction on every node,
   *  which a claim must not wait for nor fail with. A failed write (a node down) is retried on the
   *  next pass after that; meanwhile the clock lags, and a tenant back from idle starts from an older
   *  clock, with credit it should not have — fairness degrades for those, caps do not. */
  private advanceClocks(now: number): void {
    for (const [type, c] of this.clocks) {
      if (c.v <= c.written || now - c.at < CLOCK_WRITE_MS) continue;
      c.at = now;
      const v = c.v;
      advancePoolClock(this.deps.db, type, v).then(
        () => void (c.written = Math.max(c.written, v)),
        (err) => this.deps.log.debug("pool clock not advanced", { err, type }),
      );
    }
  }

  private dispatchAll(pool: Pool, claimed: ClaimedTrigger[]): void {
    // One base for the whole claim: the slot in service before any of it started (pool.ts, startKey).
    const started = pool.lastStarted;
    for (const t of claimed) this.deps.dispatch(pool, t, startKey(t.vt, t.vclock, started));
  }
}
