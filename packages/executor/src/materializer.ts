// The materializer: due cron fires become triggers, `lookaheadMs` ahead, on a loop of its own, so that a
// burst of due jobs is written back to back and is claimable the moment it is due. The claim loop is
// woken at each instant written (a fire written already due wakes it at once). A failed pass is logged
// and retried after a backoff (loop.ts).
import type { Logger } from "@fairway/core";
import {
  busyPolicyTenants,
  decideBusy,
  dueCronTenants,
  isDistributed,
  materialize,
  type Db,
  type MaterializeResult,
} from "@fairway/store";
import type { ReadyIndex } from "./ready-index.ts";
import { exponentialBackoff, Loop } from "./loop.ts";

export interface MaterializerDeps {
  db: Db;
  ready: ReadyIndex | null;
  log: Logger;
  now: () => number;
  lookaheadMs: number;
  /** The longest backoff after failed passes. */
  maxBackoffMs: number;
  /** Wake the claim loop now, or at `atMs`. */
  wakeClaims(): void;
  wakeClaimsAt(atMs: number): void;
}

/** Rows per pass; a full pass is followed by another at once. */
const BATCH = 500;
/** Tenants materialized side by side on the distributed layout (connections taken from the pool). */
const TENANTS_AT_ONCE = 4;
/** Pause between passes that found less than a batch. */
const IDLE_MS = 100;

export class Materializer {
  readonly loop: Loop;
  private markCaughtUp: () => void = () => {};
  /** Resolved once a pass found less than a batch (or failed, or a long backlog took 100 full passes,
   *  or the loop stopped). Claims wait for it: after an outage the materializer decides the overdue
   *  fires written ahead (a misfire policy may skip them), and a claim taken first would run them late
   *  on top of the policy's catch-up. */
  readonly caughtUp = new Promise<void>((resolve) => (this.markCaughtUp = resolve));
  /** Instants written and not yet reached: the claim loop's timer holds only the earliest, so each
   *  pass re-arms it with the next one (one entry per distinct instant in the lookahead). */
  private readonly upcoming = new Set<number>();
  /** Full passes so far (a long backlog counts as caught up after 100). */
  private fullPasses = 0;

  constructor(private readonly deps: MaterializerDeps) {
    this.loop = new Loop({
      pass: () => this.pass(),
      failed: "materializer pass failed",
      log: deps.log,
      onError: () => this.markCaughtUp(),
      backoffMs: exponentialBackoff(deps.maxBackoffMs),
    });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    this.markCaughtUp(); // stopped before a pass: the claim loop must not wait for one
  }

  /** The pass on the distributed layout (docs/scaling.md): which tenants have due cron jobs, and which
   *  have onBusy policies, read across the shards once per pass without a lock; then each tenant's
   *  fires, and its onBusy decisions, by statements on its shard group alone, never a transaction across
   *  tenants. `found`: the due jobs the read saw (a full batch asks for the next pass at once). */
  private async perTenant(at: Date): Promise<{ m: MaterializeResult; found: number }> {
    const { db, lookaheadMs } = this.deps;
    const due = await dueCronTenants(db, at, lookaheadMs, BATCH);
    const m: MaterializeResult = { jobs: 0, fired: 0, skipped: 0, ready: [], failed: [] };
    // A tenant whose statements fail (its node down) is logged and left for the next pass: the others'
    // fires are still written.
    const failed = (what: string, tenantId: string) => (err: unknown) =>
      this.deps.log.error(`materializer pass failed for a tenant (${what})`, { tenantId, err });
    // A few tenants at a time: each is a transaction of its own on its node, and a pass over many
    // tenants one by one would take a round trip per statement per tenant.
    for (let i = 0; i < due.length; i += TENANTS_AT_ONCE) {
      const some = due.slice(i, i + TENANTS_AT_ONCE);
      for (const one of await Promise.all(
        some.map((t) => materialize(db, at, lookaheadMs, BATCH, t.tenantId).catch(failed("fires", t.tenantId))),
      )) {
        if (!one) continue;
        m.jobs += one.jobs;
        m.fired += one.fired;
        m.skipped += one.skipped;
        m.ready.push(...one.ready);
        m.failed.push(...one.failed);
      }
    }
    for (const tenantId of await busyPolicyTenants(db))
      await decideBusy(db, at, tenantId).catch(failed("onBusy", tenantId));
    return { m, found: due.reduce((n, t) => n + t.jobs, 0) };
  }

  /** One pass; a full batch asks for the next at once. */
  private async pass(): Promise<number | "now"> {
    const { db, ready, log, now } = this.deps;
    const { m, found } = (await isDistributed(db))
      ? await this.perTenant(new Date(now()))
      : await materialize(db, new Date(now()), this.deps.lookaheadMs, BATCH).then(async (m) => {
          // onBusy skip / replace_queued: due triggers of keys at their cap (store/sql/on-busy.ts).
          await decideBusy(db, new Date(now()));
          return { m, found: m.jobs };
        });
    for (const f of m.failed) log.error("cron job paused: its schedule cannot be computed", f);
    await ready?.mark(m.ready);
    const t = now();
    let dueNow = false;
    for (const r of m.ready) {
      if (r.dueAtMs > t) this.upcoming.add(r.dueAtMs);
      else dueNow = true;
    }
    if (dueNow) this.deps.wakeClaims(); // written already due (late, or a catch-up)
    let next = Infinity;
    for (const at of this.upcoming) {
      if (at <= t) this.upcoming.delete(at);
      else if (at < next) next = at;
    }
    if (next < Infinity) this.deps.wakeClaimsAt(next);
    if (found >= BATCH) {
      if (++this.fullPasses >= 100) this.markCaughtUp();
      return "now";
    }
    this.markCaughtUp();
    return IDLE_MS;
  }
}
