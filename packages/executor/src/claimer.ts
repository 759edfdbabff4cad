// The claimer: each pass claims, for every pool with room, its fair share of due work (store claim.ts)
// and hands it to the pool, which starts it in WFQ order (pool.ts, startKey).
//
// A pool claims ahead of its free slots, once half its queue has drained (Pool.wantsClaim), so that
// claims are few and large. A tenant at its in-flight cap does not wait for that cadence: the cap
// counts running rows, so its slot frees when one of its runs is settled, and the settle claims for
// it in the same transaction, as many as it freed, if the pool has room (handOff(), store hand-off.ts).
// A claim that takes a tenant to its cap has its next triggers claimed on standby at once (reachedCap).
//
// How a pool's claim meets the tables is the layout's (store layout/): one statement over every
// candidate on one PostgreSQL; on a Citus cluster a claim per tenant for the share TenantShares gives
// it (tenant-shares.ts). Caps stay exact either way: each claim locks its tenants and reads their
// running counts after the lock.
import type { Logger } from "@fairway/core";
import {
  claimReport,
  layoutOf,
  type ClaimedTrigger,
  type ClaimInput,
  type ClaimReport,
  type Db,
  type Layout,
  type StandbyInput,
} from "@fairway/store";
import type { InDoubtClaims } from "./in-doubt.ts";
import type { ExecutorObserver } from "./observe.ts";
import { startKey, type Pool } from "./pool.ts";
import type { ReadyIndex } from "./ready-index.ts";
import { TenantShares } from "./tenant-shares.ts";

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
  /** Tenants a claim took to their in-flight cap (their next triggers can go on standby). */
  reachedCap?(type: string, reached: Array<{ tenantId: string; key: string | null }>): void;
}

export class Claimer {
  /** The per-tenant layout's budget split over a pool's tenants (unused by the single-node layout). */
  readonly shares: TenantShares;
  /** The layout, once the first pass has read it. */
  private layout: Layout | null = null;

  constructor(private readonly deps: ClaimerDeps) {
    this.shares = new TenantShares(deps.db, deps.log);
  }

  /** A standby claim after a claim of this claimer's, as the layout sends it. */
  standbyInputs(input: StandbyInput): StandbyInput[] {
    if (!this.layout) throw new Error("standby claims follow a claim: the layout is read by then");
    return this.layout.standby(input);
  }

  /** The claims a settle makes for the at-cap tenants it frees: per pool with room, as many as were
   *  freed (at most its room), among exactly those tenants. A slot freed by a keyed trigger at its cap
   *  is claimed even when the pool's queue is full: no standby trigger of its key took it (store
   *  standby.ts), the key has nothing else to refill it, and what the claim gets starts at the front of the queue
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
  handedOff(input: ClaimInput, report: ClaimReport, now: number): boolean {
    const pool = this.deps.pools.get(input.type);
    if (pool && report.claimed.length > 0) {
      this.deps.stats.claimed += report.claimed.length;
      this.dispatchAll(pool, report.claimed);
      // A hand-off follows a claim, so the layout is known by now.
      this.layout?.handedOff(input.type, report, this.shares, now);
    }
    return report.busy.length > 0;
  }

  /** One pass over the pools; returns how many pools claimed something (then the caller claims again
   *  at once while slots are free: a claim looks at a bounded part of each tenant's backlog, so a
   *  short claim does not mean the backlog is empty). */
  async pass(now: number): Promise<number> {
    const layout = (this.layout ??= await layoutOf(this.deps.db));
    let work = 0;
    for (const [type, pool] of this.deps.pools) {
      if (!pool.wantsClaim) continue;
      const budget = pool.claimable;
      const { claimed, busy } = await this.claimFor(layout, type, pool, now, budget);
      // Also when it came short because another claim held tenants it would have served: that claim
      // is about to commit, and this one takes its share then rather than after an idle poll.
      if (claimed.length > 0 || (busy.length > 0 && claimed.length < budget)) work++;
    }
    return work;
  }

  /** Claim up to `budget` for `pool` as the layout claims, and dispatch what was claimed. */
  private async claimFor(
    layout: Layout,
    type: string,
    pool: Pool,
    now: number,
    budget: number,
  ): Promise<{ claimed: ClaimedTrigger[]; busy: string[] }> {
    const { ready, log } = this.deps;
    const candidates = ready ? await ready.candidates(type, now, budget) : undefined;
    if (candidates && candidates.length === 0) return { claimed: [], busy: [] }; // nothing due: no query at all
    const claimStarted = performance.now();
    const got = await layout.claimPool(
      this.deps.db,
      {
        type,
        budget,
        owner: this.deps.owner,
        leaseMs: pool.config.leaseMs,
        now,
        candidates,
        send: (input) => this.claim(input),
        onSweepFailed: ready
          ? (err) => log.warn("the sweep's read of the queue failed; claims go on from the ready index", { err })
          : undefined,
      },
      this.shares,
    );
    if (!got) return { claimed: [], busy: [] };
    const { claimed, busy } = got;
    await this.afterClaims({
      type,
      pool,
      now,
      started: claimStarted,
      candidates: got.asked,
      claimed,
      budget: got.budget,
      busy,
    });
    this.dispatchAll(pool, claimed);
    this.toStandby(type, claimed);
    if (got.failed.size > 0) {
      // One tenant's failure (its node down) must not hold the others back: it is logged and the
      // tenant set aside a moment (TenantShares.failed).
      const [err] = got.failed.values();
      log.warn("claims failed for some tenants; the others' went on", { err, tenants: got.failed.size });
    }
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

  /** Tenants, and keys, this claim took to their cap: their next triggers go on standby (store
   *  standby.ts; a keyed trigger asks for its key, which the statement holds only at the key's cap). */
  private toStandby(type: string, claimed: ClaimedTrigger[]): void {
    const reached = new Map<string, { tenantId: string; key: string | null }>();
    for (const c of claimed)
      if (c.atCap) reached.set(`${c.tenantId}\u0000${c.key ?? ""}`, { tenantId: c.tenantId, key: c.key });
    if (reached.size > 0) this.deps.reachedCap?.(type, [...reached.values()]);
  }

  /** A claim under a token of its own; one that failed is noted in doubt (it may have committed). */
  private claim(input: ClaimInput): Promise<ClaimReport> {
    return this.deps.inDoubt.send(input, (sent) => claimReport(this.deps.db, sent));
  }

  private dispatchAll(pool: Pool, claimed: ClaimedTrigger[]): void {
    // One base for the whole claim: the slot in service before any of it started (pool.ts, startKey).
    const started = pool.lastStarted;
    for (const t of claimed) this.deps.dispatch(pool, t, startKey(t.vt, t.vclock, started));
  }
}
