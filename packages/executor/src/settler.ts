// Turns finished runs into settlements and writes them in batches (one fenced transaction per
// batch). A failed write is retried, never dropped, until the lease it is fenced by has surely
// expired — after that the reaper owns the trigger and our write would change nothing anyway.
// A batch with at-cap results in it also claims for their tenants, in the same transaction (handOff):
// the settle is what frees their slots (docs/decisions/0022-settle-batching-and-hand-off.md), and
// claims their next triggers on standby (store standby.ts; docs/decisions/0024-standby-hand-over.md).
import { decideRetry, type DeliveryResult } from "@fairway/core";
import {
  layoutOf,
  settleIn,
  settleAndClaim,
  withDeadline,
  type ClaimedTrigger,
  type ClaimInput,
  type ClaimReport,
  type Db,
  type Layout,
  type Scope,
  type StandbyInput,
  type Settled,
  type Settlement,
} from "@fairway/store";
import type { SentClaim } from "./in-doubt.ts";

export interface SettlerOptions {
  db: Db;
  /** Max rows per settle statement. Default 1000. */
  batchSize?: number;
  /** How long results may wait to be batched, beyond a settle already being written. Default 40 ms. */
  lingerMs?: number;
  /** The linger of a result whose tenant is at its in-flight cap (ClaimedTrigger.atCap): its tenant's
   *  next start waits for this settle (the cap counts running rows), so by default it does not linger
   *  at all — it goes with the next write. */
  atCapLingerMs?: number;
  /** `freed`: the settled rows whose tenant was at its cap and whose slot no standby trigger took —
   *  each one frees a slot that tenant waits for. */
  onSettled?: (rows: Settled[], freed: Settled[]) => void;
  /** Claims to make in the settle's own transaction for the at-cap tenants of a batch (store
   *  hand-off.ts): `freed` are the at-cap results whose slot no standby trigger took, `atCap` all of
   *  them. Asked as the batch is written, so that the pools' room is current. What the claims got
   *  goes to onHandedOff; what each standby claim got to onStandby, once per claim (none where it failed or
   *  its answer was lost). */
  handOff?: (freed: HeldBy[], atCap: HeldBy[]) => { claims: ClaimInput[]; standby: StandbyInput[] };
  onHandedOff?: (input: ClaimInput, report: ClaimReport) => void;
  onStandby?: (input: StandbyInput, claimed: ClaimedTrigger[]) => void;
  /** The hand-off claims of a settle that failed or did not answer in time: they may have committed,
   *  or may yet, and are to be released by their lease tokens (in-doubt.ts). Called again when a late
   *  answer comes. */
  onInDoubt?: (claims: SentClaim[]) => void;
  onError?: (err: unknown) => void;
  /** A hand-off claim's own transaction failed (the settle before it landed); it is noted in doubt. */
  onHandOffFailed?: (err: unknown) => void;
  /** A write that has not answered in this long counts as failed and is retried. Default 10 s: below
   *  the store's own deadline, so that one settle left unanswered does not hold every later settle (and
   *  stop()) for long. The retry is safe: settles are fenced by lease token and status, so one repeated
   *  after the first did commit changes nothing. */
  writeTimeoutMs?: number;
  now: () => number;
  random?: () => number;
}

/** The pool and tenant a settled trigger ran for, and its fairness key. */
export interface HeldBy {
  type: string;
  tenantId: string;
  key?: string | null;
}

interface Pending {
  s: Settlement;
  giveUpAt: number;
  atCap: boolean;
  by?: HeldBy;
}

/** What the claim stamped on a trigger, and its retry policy: all a settlement needs. */
export type LeaseHeld = Pick<
  ClaimedTrigger,
  "id" | "leaseToken" | "attempt" | "maxAttempts" | "initialDelayMs" | "maxDelayMs"
> &
  Partial<Pick<ClaimedTrigger, "backoff" | "jitter" | "failing" | "tenantId">>;

export function decideSettlement(
  t: LeaseHeld,
  r: DeliveryResult,
  startedAt: Date,
  now: number,
  random = Math.random,
): Settlement {
  const decision = decideRetry(
    {
      outcome: r.outcome,
      httpStatus: r.httpStatus,
      retryAfterMs: r.retryAfterMs,
      attempt: t.attempt,
      policy: {
        maxAttempts: t.maxAttempts,
        initialDelayMs: t.initialDelayMs,
        maxDelayMs: t.maxDelayMs,
        backoff: t.backoff,
        jitter: t.jitter,
      },
    },
    random,
  );
  // One object, one shape whatever the decision.
  const s: Settlement = {
    id: t.id,
    tenantId: t.tenantId,
    leaseToken: t.leaseToken,
    attempt: t.attempt,
    status: "succeeded",
    nextAttemptAt: null,
    reason: null,
    startedAt,
    durationMs: r.durationMs,
    outcome: r.outcome,
    httpStatus: r.httpStatus,
    error: r.error,
    responseBody: r.responseBody,
    detail:
      r.request || r.responseHeaders || r.logs
        ? {
            request: r.request ?? null,
            responseHeaders: r.responseHeaders ?? null,
            responseTruncated: r.responseTruncated ?? false,
            ...(r.logs ? { logs: r.logs } : {}),
          }
        : null,
    pauseJob: false,
  };
  if (decision.kind === "done" && t.failing) s.recover = true;
  else if (decision.kind === "retry") {
    s.status = "pending";
    s.nextAttemptAt = new Date(now + decision.delayMs);
  } else if (decision.kind === "dead") {
    s.status = "dead";
    s.reason = decision.reason;
    s.pauseJob = decision.pauseJob;
  }
  return s;
}

export class Settler {
  private queue: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** When the armed timer fires, and the earliest it may after a failed write (performance.now()). */
  private timerAt = Infinity;
  private notBefore = 0;
  private flushing: Promise<void> | null = null;
  private readonly batchSize: number;
  private readonly lingerMs: number;
  private readonly atCapLingerMs: number;

  constructor(private readonly opts: SettlerOptions) {
    this.batchSize = opts.batchSize ?? 1000;
    this.lingerMs = opts.lingerMs ?? 40;
    this.atCapLingerMs = Math.min(this.lingerMs, opts.atCapLingerMs ?? 0);
  }

  get size(): number {
    return this.queue.length;
  }

  /** Queue a settlement; a write that keeps failing is retried until `giveUpAtMs`. `atCap`: its tenant
   *  waits for the slot it frees (ClaimedTrigger.atCap), so it lingers atCapLingerMs, not lingerMs;
   *  `by` names that tenant for the hand-off claim. */
  add(s: Settlement, giveUpAtMs: number, atCap = false, by?: HeldBy): void {
    this.queue.push({ s, giveUpAt: giveUpAtMs, atCap, by });
    // A write under way goes on to every full batch itself: no waiter per add while it runs (thousands
    // of them, when a large claim of no-op runs finishes at once).
    if (this.queue.length >= this.batchSize && !this.flushing) void this.write("full");
    else this.arm(atCap ? this.atCapLingerMs : this.lingerMs);
  }

  /** Write everything queued; resolves when the queue is empty or only holds writes that keep failing. */
  flush(): Promise<void> {
    return this.write("all");
  }

  /** Write within `ms` (not before a failed write's backoff): an armed timer that fires sooner
   *  stands, a later one is brought forward. */
  private arm(ms: number): void {
    const now = performance.now();
    const at = Math.max(now + ms, this.notBefore);
    if (this.timer) {
      if (this.timerAt <= at) return;
      clearTimeout(this.timer);
    }
    this.timerAt = at;
    this.timer = setTimeout(() => void this.write("linger"), at - now);
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }

  /** "full": a batch is ready. "linger": the oldest queued settlement has waited its linger. "all": flush. */
  private async write(why: "full" | "linger" | "all"): Promise<void> {
    if (why !== "full") this.disarm();
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    this.flushing = this.writeBatches(why).finally(() => (this.flushing = null));
    await this.flushing;
  }

  /** Settle a batch (`scope` one tenant: all of it that tenant's); with at-cap results in it, claim for
   *  their tenants in the same transaction. */
  private async settle(batch: Pending[], scope: Scope): Promise<Settled[]> {
    const { tenantId } = scope;
    const atCap = batch.flatMap((p) => (p.atCap && p.by ? [p.by] : []));
    const freed = batch.flatMap((p) => (p.atCap && p.by && !p.s.successor ? [p.by] : []));
    const { claims, standby } =
      atCap.length > 0 && this.opts.handOff ? this.opts.handOff(freed, atCap) : { claims: [], standby: [] };
    const ms = this.opts.writeTimeoutMs ?? 10_000;
    if (claims.length === 0 && standby.length === 0)
      return withDeadline(
        settleIn(
          this.opts.db,
          batch.map((p) => p.s),
          scope,
        ),
        ms,
        "a settle",
      );
    const written = settleAndClaim(
      this.opts.db,
      batch.map((p) => p.s),
      claims,
      standby,
      scope,
    );
    let r: Awaited<typeof written>;
    try {
      r = await withDeadline(written, ms, "a settle");
    } catch (err) {
      // Not dispatched, whatever the answer: the claims are released by token now, and again once
      // a late answer says they committed after that release had looked.
      const sent = [...claims, ...standby].map((c) => ({ leaseToken: c.leaseToken, tenantId: tenantId ?? c.tenantId }));
      const inDoubt = () => this.opts.onInDoubt?.(sent);
      inDoubt();
      written.then(inDoubt, inDoubt);
      for (const c of standby) this.opts.onStandby?.(c, []);
      throw err;
    }
    // A claim whose own transaction failed is released by its token, like one whose answer was lost.
    const lost = [...claims.filter((_, i) => !r.claims[i]), ...standby.filter((_, i) => !r.standby[i])];
    if (lost.length > 0) {
      this.opts.onInDoubt?.(lost.map((c) => ({ leaseToken: c.leaseToken, tenantId: tenantId ?? c.tenantId })));
      for (const err of r.failed) this.opts.onHandOffFailed?.(err);
    }
    claims.forEach((c, i) => {
      const report = r.claims[i];
      if (report) this.opts.onHandedOff?.(c, report);
    });
    standby.forEach((c, i) => {
      this.opts.onStandby?.(c, r.standby[i] ?? []);
    });
    return r.settled;
  }

  /** Only full batches are written back to back. A remainder short of a batch waits for its linger —
   *  unless it has already waited (this write is its timer's) or everything is being flushed — so that
   *  a settle's fixed cost is paid per batch, not per handful of rows. */
  private async writeBatches(why: "full" | "linger" | "all"): Promise<void> {
    for (let first = true; this.queue.length > 0; first = false) {
      const lingered = why === "all" || (why === "linger" && first);
      if (this.queue.length < this.batchSize && !lingered) {
        return this.arm(this.queue.some((p) => p.atCap) ? this.atCapLingerMs : this.lingerMs);
      }
      const batch = this.queue.splice(0, this.batchSize);
      const failed = await this.writeBatch(batch);
      if (failed.length > 0) {
        const now = this.opts.now();
        const keep = failed.filter((p) => p.giveUpAt > now);
        this.queue.unshift(...keep);
        if (keep.length > 0) {
          // Back off: a linger timer armed meanwhile, or a result added, would retry within milliseconds.
          this.disarm();
          this.notBefore = performance.now() + 250;
          this.arm(250);
        }
        return;
      }
    }
  }

  /** Writes a batch as the layout writes: one transaction, or on a Citus cluster one per tenant, each
   *  on its tenant's node. Returns what was not written (a failed write's rows, in their order), for a
   *  retry: settles are fenced, so one retried after it did commit changes nothing. */
  private async writeBatch(batch: Pending[]): Promise<Pending[]> {
    let layout: Layout;
    try {
      layout = await layoutOf(this.opts.db);
    } catch (err) {
      this.opts.onError?.(err);
      return batch;
    }
    const written = await layout.fanOut(
      batch,
      (p) => p.s.tenantId ?? p.by?.tenantId,
      async (scope, group) => {
        const rows = await this.settle(group, scope);
        const atCap = new Set(group.filter((p) => p.atCap && !p.s.successor).map((p) => p.s.id));
        this.opts.onSettled?.(rows, atCap.size === 0 ? [] : rows.filter((r) => atCap.has(r.id)));
      },
    );
    const failed: Pending[] = [];
    for (const w of written) {
      if (w.outcome.status === "fulfilled") continue;
      this.opts.onError?.(w.outcome.reason);
      failed.push(...w.items);
    }
    return failed;
  }
}
