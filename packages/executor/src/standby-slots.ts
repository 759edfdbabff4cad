// Standby slots (store standby.ts): a tenant at its in-flight cap holds its next triggers here, claimed
// but not counted against its cap, at most one for each of its counted triggers in a pool here. When
// one of its runs here ends, the next it holds on standby takes that run's slot at once (takeOver): no
// round trip between the answer and the next request. A fairness key at its own cap does the same per
// key: its standby triggers take over only from runs of that key, so that the hand-over leaves the
// key's count where it was. This is the bookkeeping — per group (a tenant in a pool, or a key of it),
// its counted triggers here and its standby list in slot order; the executor runs, settles, renews
// and releases (StandbyHost).
import type { Logger } from "@fairway/core";
import type { ClaimedTrigger, StandbyInput } from "@fairway/store";
import type { Pool } from "./pool.ts";
import type { HeldBy } from "./settler.ts";
import { RunAbort } from "./transport.ts";

/** A claimed trigger not yet finished (on standby, queued or running in its pool). Finished ones belong
 *  to the settler. */
export interface Held {
  t: ClaimedTrigger;
  pool: Pool;
  started: boolean;
  /** Claimed on standby: not counted against its tenant's cap, and started only in the slot one of its
   *  tenant's runs here frees (takeOver). */
  standby: boolean;
  abort: RunAbort;
}

/** What the slots need from the executor. */
export interface StandbyHost {
  owner: string;
  log: Logger;
  /** This executor's pool of a type, if it has one. */
  pool(type: string): Pool | undefined;
  /** Claim on standby (store standbyClaim). */
  claim(input: StandbyInput): Promise<ClaimedTrigger[]>;
  /** A standby claim as the layout sends it (store Layout.standby). */
  split(input: StandbyInput): StandbyInput[];
  /** Hold a trigger kept on standby: its lease renewed, released on stop. */
  hold(h: Held): void;
  /** Give triggers back (pending again); they are no longer held. */
  release(list: Held[]): void;
}

/** The group of a tenant in a pool. */
const tenantGroup = (t: { type: string; tenantId: string }) => `${t.type}\u0000${t.tenantId}`;
/** The group of a fairness key in a pool, or undefined without one (a key holds no NUL). */
const keyGroup = (t: { type: string; tenantId: string; key?: string | null }) =>
  t.key == null ? undefined : `${t.type}\u0000${t.tenantId}\u0000${t.key}`;
/** Where a trigger waits on standby: a keyed one in its key's group, any other in its tenant's (the
 *  tenant's standby claim takes no keyed trigger). */
const standbyGroup = (t: { type: string; tenantId: string; key?: string | null }) => keyGroup(t) ?? tenantGroup(t);

export class StandbySlots {
  /** Per group: its triggers on standby here, in slot order, and how many of its counted triggers are
   *  in the pool here (queued or running). A keyed trigger is counted in its tenant's group and its
   *  key's. */
  private readonly standby = new Map<string, Held[]>();
  private readonly counted = new Map<string, number>();
  /** Per group: standby triggers asked for (wanted) and not yet answered. Counted as held by the next
   *  ask, so two asks made before either answer (a settle's and a claim's) never cross into more
   *  standby leases than counted runs here. */
  private readonly asked = new Map<string, number>();
  /** Standby claims under way outside a settle (afterClaim). */
  private readonly claims = new Set<Promise<void>>();

  constructor(private readonly host: StandbyHost) {}

  /** A counted trigger entered its pool here. */
  count(t: ClaimedTrigger): void {
    this.add(tenantGroup(t));
    if (t.key != null) this.add(keyGroup(t)!);
  }

  private add(k: string): void {
    this.counted.set(k, (this.counted.get(k) ?? 0) + 1);
  }

  /** A counted trigger left the pool. Standby triggers start only in the slot of a run of their group
   *  here that ends; with none left (a run ended without handing over: an at-most-once run not sent),
   *  they are released rather than held with no run to take over from — unless `keep` (stopping:
   *  stop() releases everything held). A successor is counted (count) before its predecessor leaves,
   *  so a hand-over never empties its own group. */
  uncount(t: ClaimedTrigger, handedOver: boolean, keep = false): void {
    this.remove(tenantGroup(t), handedOver || keep);
    if (t.key != null) this.remove(keyGroup(t)!, handedOver || keep);
  }

  private remove(k: string, keep: boolean): void {
    const n = (this.counted.get(k) ?? 1) - 1;
    if (n > 0) return void this.counted.set(k, n);
    this.counted.delete(k);
    const left = this.standby.get(k);
    if (keep || !left || left.length === 0) return;
    this.standby.delete(k);
    this.host.release(left);
  }

  /** The run of `t` ended: the next trigger held on standby here for its key, else for its tenant,
   *  takes the slot, now counted against its caps (at cap by definition). Undefined when none is held. */
  takeOver(t: ClaimedTrigger): Held | undefined {
    const next = (t.key != null ? this.next(keyGroup(t)!) : undefined) ?? this.next(tenantGroup(t));
    if (!next) return undefined;
    next.standby = false;
    next.t.atCap = true;
    return next;
  }

  /** The first trigger held on standby in group `k`, out of its list. */
  private next(k: string): Held | undefined {
    const list = this.standby.get(k);
    const next = list?.shift();
    if (list?.length === 0) this.standby.delete(k);
    return next;
  }

  /** How many triggers each at-cap group of a settle batch should hold on standby here: one for each
   *  of its counted triggers here once the batch's hand-off claims have refilled the freed slots, less
   *  those already held or asked for. A keyed result asks for its key (the statement holds triggers
   *  only for a key at its own cap), any other for its tenant. What it returns is asked for until
   *  `answered`. */
  wanted(freed: HeldBy[], atCap: HeldBy[]): StandbyInput[] {
    const freedIn = new Map<string, number>();
    for (const r of freed) freedIn.set(standbyGroup(r), (freedIn.get(standbyGroup(r)) ?? 0) + 1);
    const inputs: StandbyInput[] = [];
    const seen = new Set<string>();
    for (const r of atCap) {
      const k = standbyGroup(r);
      const pool = this.host.pool(r.type);
      if (seen.has(k) || !pool) continue;
      seen.add(k);
      const n =
        (this.counted.get(k) ?? 0) +
        (freedIn.get(k) ?? 0) -
        (this.standby.get(k)?.length ?? 0) -
        (this.asked.get(k) ?? 0);
      if (n <= 0) continue;
      this.asked.set(k, (this.asked.get(k) ?? 0) + n);
      let input = inputs.find((i) => i.type === r.type);
      if (!input) {
        input = { type: r.type, owner: this.host.owner, leaseMs: pool.config.leaseMs, want: [] };
        inputs.push(input);
      }
      input.want.push(r.key == null ? { tenantId: r.tenantId, n } : { tenantId: r.tenantId, n, key: r.key });
    }
    return inputs;
  }

  /** A claim took these tenants (or keys) to their cap: their next triggers go on standby now, so that
   *  even their first runs here are refilled without a round trip. As the layout sends them: one, or
   *  (a Citus cluster) one per tenant, each on its tenant's shard. */
  afterClaim(type: string, reached: Array<{ tenantId: string; key?: string | null }>): void {
    const inputs = this.wanted(
      [],
      reached.map((r) => ({ type, tenantId: r.tenantId, key: r.key ?? null })),
    );
    for (const input of inputs.flatMap((i) => this.host.split(i))) {
      const p = this.host.claim(input).then(
        (claimed) => this.answered(input, claimed),
        (err) => {
          this.answered(input, []);
          this.host.log.warn("standby claim failed", { err });
        },
      );
      this.claims.add(p);
      void p.finally(() => this.claims.delete(p));
    }
  }

  /** Resolves once the standby claims under way (afterClaim) are held or released. */
  async idle(): Promise<void> {
    await Promise.all([...this.claims]);
  }

  /** The answer to an ask (`wanted`): what it claimed on standby, none when it failed or its answer
   *  was lost (a lost claim is released by its token). Its triggers are held until a run of their
   *  group here ends. */
  answered(input: StandbyInput, claimed: ClaimedTrigger[]): void {
    for (const w of input.want) {
      const k = standbyGroup({ type: input.type, tenantId: w.tenantId, key: w.key });
      const n = (this.asked.get(k) ?? 0) - w.n;
      if (n > 0) this.asked.set(k, n);
      else this.asked.delete(k);
    }
    this.hold(claimed);
  }

  /** Never more per group than its counted triggers here (its runs may have ended while the claim was
   *  written): the rest are released. */
  private hold(claimed: ClaimedTrigger[]): void {
    const orphans: Held[] = [];
    for (const t of claimed) {
      const pool = this.host.pool(t.type);
      const h: Held = { t, pool: pool!, started: false, standby: true, abort: new RunAbort() };
      const k = standbyGroup(t);
      const list = this.standby.get(k) ?? [];
      // No pool, or no run of its group here to take over from (they ended while the settle was
      // written), or as many on standby as counted.
      if (!pool || list.length >= (this.counted.get(k) ?? 0)) {
        orphans.push(h);
        continue;
      }
      this.host.hold(h);
      list.push(h);
      this.standby.set(k, list);
    }
    if (orphans.length > 0) this.host.release(orphans);
  }

  /** A standby trigger whose lease was lost: it never starts here (another executor may hold it). */
  drop(h: Held): void {
    const k = standbyGroup(h.t);
    const list = this.standby.get(k)?.filter((x) => x !== h) ?? [];
    if (list.length > 0) this.standby.set(k, list);
    else this.standby.delete(k);
  }
}
