// The claimer's view of the ready-tenant index: which tenants have due work in a pool,
// so a claim locks only those and an idle pool costs no Postgres query at all.
//
// Redis is coordination, never correctness. Every path that makes a trigger pending marks its tenant
// (API create/run/replay, materializer, retry settle, reaper, release). When the index is missing
// (fresh or flushed Redis) it is rebuilt from Postgres; when Redis fails, claims fall back to finding
// candidates in Postgres; and every `sweepMs` a Postgres-candidate claim runs anyway, so even an index
// that is wrong can delay work by at most that long — never lose it.
import type { Coordinator } from "@fairway/coord";
import type { Logger } from "@fairway/core";
import { pendingByTenant, type ClaimedTrigger, type Db } from "@fairway/store";

export type ReadyIndexCoordinator = Pick<
  Coordinator,
  "markReady" | "readyTenants" | "reschedule" | "rebuildReady" | "hasReadyIndex"
>;

export class ReadyIndex {
  private checked = new Map<string, number>();
  private lastSweep = new Map<string, number>();

  constructor(
    private readonly coord: ReadyIndexCoordinator,
    private readonly db: Db,
    private readonly log: Logger,
    /** A Postgres-candidate claim runs at least this often per pool. Default 5000 ms. */
    private readonly sweepMs = 5000,
    /** How long a tenant that is due but could not start (cap, rate) is set aside. */
    private readonly snoozeMs = 250,
  ) {}

  /** Candidate tenants for a claim in `type`, or undefined when the claim should find them in Postgres. */
  async candidates(
    type: string,
    now: number,
    budget: number,
  ): Promise<Array<{ tenantId: string; dueAtMs: number }> | undefined> {
    if (now - (this.lastSweep.get(type) ?? 0) >= this.sweepMs) {
      this.lastSweep.set(type, now);
      return undefined;
    }
    try {
      await this.ensureBuilt(type, now);
      return await this.coord.readyTenants(type, now, Math.max(16, budget * 2));
    } catch (err) {
      this.log.warn("ready index unavailable; finding candidates in Postgres", { err, type });
      return undefined;
    }
  }

  /** After a claim: set aside the candidates that got nothing and could not have, at their next due
   *  time. Not those another claim held (`busy`: it serves them), and none when the claim used its
   *  whole budget: then the unserved ones may simply have had later WFQ slots than those served, and
   *  setting them aside would hand the next claims to the others (a weight-1 tenant among 1:2:5 went
   *  without starts for a whole claim cycle). */
  async afterClaim(
    type: string,
    now: number,
    candidates: Array<{ tenantId: string; dueAtMs: number }>,
    claimed: ClaimedTrigger[],
    budget: number,
    busy: string[],
  ) {
    if (claimed.length >= budget) return;
    const kept = new Set([...claimed.map((c) => c.tenantId), ...busy]);
    const idle = candidates.filter((c) => !kept.has(c.tenantId));
    if (idle.length === 0) return;
    try {
      const next = new Map(
        (
          await pendingByTenant(
            this.db,
            type,
            // On a Citus cluster a read per tenant, each on its shard (the layout's).
            idle.map((c) => c.tenantId),
          )
        ).map((d) => [d.tenantId, d.dueAtMs]),
      );
      await Promise.all(
        idle.map((c) => {
          const due = next.get(c.tenantId) ?? null;
          // Due but not started (at its cap, or out of rate tokens): look again soon. A settle that
          // frees an at-cap tenant's slot marks it due at once (executor.ts).
          const at = due === null ? null : Math.max(due, now + this.snoozeMs);
          return this.coord.reschedule(type, c.tenantId, c.dueAtMs, at);
        }),
      );
    } catch (err) {
      this.log.warn("ready index reschedule failed", { err, type });
    }
  }

  /** Record that tenants have work due; best effort. */
  async mark(entries: Array<{ type: string; tenantId: string; dueAtMs: number }>): Promise<void> {
    if (entries.length === 0) return;
    const earliest = new Map<string, { type: string; tenantId: string; dueAtMs: number }>();
    for (const e of entries) {
      const k = `${e.type}\u0000${e.tenantId}`;
      const cur = earliest.get(k);
      if (!cur || e.dueAtMs < cur.dueAtMs) earliest.set(k, e);
    }
    try {
      await Promise.all([...earliest.values()].map((e) => this.coord.markReady(e.type, e.tenantId, e.dueAtMs)));
    } catch (err) {
      this.log.warn("ready index mark failed; the periodic Postgres sweep will find the work", { err });
    }
  }

  private async ensureBuilt(type: string, now: number): Promise<void> {
    if (now - (this.checked.get(type) ?? 0) < 1000) return;
    this.checked.set(type, now);
    if (await this.coord.hasReadyIndex(type)) return;
    const entries = (await pendingByTenant(this.db, type)).filter((d) => d.dueAtMs !== null) as Array<{
      tenantId: string;
      dueAtMs: number;
    }>;
    await this.coord.rebuildReady(type, entries);
    this.log.info("ready index rebuilt from Postgres", { type, tenants: entries.length });
  }
}
