// The executor: composes the claim loop (claimer.ts), the materializer (materializer.ts), the reaper,
// lease renewal and the settler around its pools. Runtime-neutral: it is handed its database,
// transport, coordinator and clock. Its loops never die (a failed step counts as no work and is
// logged) and never spin (they sleep, interruptibly, when there is nothing to do: loop.ts). Every claimed
// trigger is settled or released, whatever happens.
import { newId, silentLogger, type Logger, type SecretsKeyring } from "@fairway/core";
import {
  handlerPoolTypes,
  layoutOf,
  listPools,
  markSending,
  NOTIFICATION_POOL,
  releaseLeases,
  standbyClaim,
  renewLeases,
  settleCancelled,
  rerunOverride,
  type ClaimedTrigger,
  type Db,
  type Layout,
  type Scope,
} from "@fairway/store";
import { atMostOnce } from "./at-most-once.ts";
import { notificationHandler, type Mailer } from "./notify.ts";
import { Heartbeat, type HeartbeatOptions } from "./heartbeat.ts";
import { reportAttempt, type ExecutorObserver } from "./observe.ts";
import { secretResolver } from "./secret-resolver.ts";
import { Retention, type RetentionOptions } from "./retention.ts";
import { CancelWatch } from "./cancel-watch.ts";
import { Claimer } from "./claimer.ts";
import { InDoubtClaims } from "./in-doubt.ts";
import { Materializer } from "./materializer.ts";
import { Pool, startKey } from "./pool.ts";
import { ReadyIndex, type ReadyIndexCoordinator } from "./ready-index.ts";
import { reapExpired } from "./reaper.ts";
import { runTrigger, type Handler, type RunDeps } from "./run-trigger.ts";
import type { AttemptTracer } from "./trace.ts";
import { Settler, decideSettlement } from "./settler.ts";
import { exponentialBackoff, Loop } from "./loop.ts";
import { StandbySlots, type Held } from "./standby-slots.ts";
import { MAX_RESPONSE_BYTES, RunAbort, type Transport } from "./transport.ts";
import { Watchdog } from "./watchdog.ts";

interface WakeSource {
  onWake(listener: () => void): () => void;
  /** Wake every executor listening (best effort). */
  wake?(): Promise<void>;
}

export interface ExecutorOptions {
  db: Db;
  transport: Transport;
  handlers?: Record<string, Handler>;
  /** Claim only these pool types (a handler worker: its handlers' types). Default every pool, except
   *  handler pools (served by workers, store handler-pools.ts) this executor has no handler for. */
  types?: readonly string[];
  /** Wake-up hints (a job was created due now). */
  wake?: WakeSource;
  /** The ready-tenant index (Redis); without it candidates are always found in Postgres. */
  readyIndex?: ReadyIndexCoordinator;
  /** Lease owner name. Default a random executor id. */
  owner?: string;
  /** Idle poll interval. Default 250 ms. */
  pollMs?: number;
  /** Cron fires are materialized this far ahead, so they are claimable the moment they are due, even
   *  in a burst of thousands due in one second. Default 10 000 ms. Exclusive overlap policies are
   *  planned at most 1 s ahead whatever this says (core EXCLUSIVE_LOOKAHEAD_MS). */
  lookaheadMs?: number;
  /** Reaper interval. Default 1000 ms. */
  reapEveryMs?: number;
  /** Pool config refresh. Default 2000 ms. */
  poolRefreshMs?: number;
  allowPrivateTargets?: boolean;
  /** Opens the tenant secrets a target names (FAIRWAY_SECRETS_KEY). Without it, a delivery naming a
   *  secret ends secret_missing. */
  secretsKey?: SecretsKeyring;
  /** Clock (ms). Default Date.now. */
  now?: () => number;
  log?: Logger;
  /** Settle batching (settler.ts): rows per statement, and how long a result may wait to share one —
   *  by default not at all when its tenant is at its in-flight cap. */
  settleBatch?: number;
  settleLingerMs?: number;
  settleAtCapLingerMs?: number;
  /** Registration and heartbeats in Postgres (heartbeat.ts). */
  heartbeat?: HeartbeatOptions;
  /** Deleting expired history (retention.ts). */
  retention?: RetentionOptions;
  /** Metrics hooks (observe.ts); every finished attempt is also logged at info as `attempt_finished`. */
  observer?: ExecutorObserver;
  /** Sends email notifications (notify.ts); without it an email notification fails. */
  mailer?: Mailer;
  /** A loop step running this long is a stall: the loop is restarted (watchdog.ts). Default 30 000 ms,
   *  above the store's statement deadline, which ends a wait on Postgres first. */
  stallMs?: number;
  /** OpenTelemetry spans of attempts and settles (trace.ts); absent: off. */
  tracer?: AttemptTracer;
}

/** What readiness reads of an executor (health()). */
export interface ExecutorHealth {
  /** When the claim loop last ended a pass without error (Date.now() ms), or null before the first. */
  lastClaimAt: number | null;
  /** When a settle last landed, or null before the first. */
  lastSettleAt: number | null;
  /** When the executor started. */
  startedAt: number | null;
  /** Stalls the watchdog saw, by loop. */
  stalls: ReadonlyMap<string, number>;
}

export class Executor {
  readonly owner: string;
  private pools = new Map<string, Pool>();
  private held = new Map<string, Held>();
  private readonly cancels: CancelWatch;
  /** What at-cap tenants hold on standby here (standby-slots.ts). stop() waits for the standby claims
   *  under way, then releases what they got with everything else held. */
  private readonly slots: StandbySlots;
  /** The claim loop (loop.ts): a pass is tick(). */
  private readonly loop: Loop;
  private settler: Settler;
  private stopping = false;
  private started = false;
  private readonly claimer: Claimer;
  private readonly materializer: Materializer;
  private dueTimer: ReturnType<typeof setTimeout> | null = null;
  private dueTimerAt = Infinity;
  private renewTimer: ReturnType<typeof setTimeout> | null = null;
  private unsubscribe: (() => void) | null = null;
  private last = { reap: 0, pools: 0 };
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly ready: ReadyIndex | null;
  private readonly runDeps: RunDeps;
  private readonly heartbeat: Heartbeat;
  private readonly inDoubt: InDoubtClaims;
  private releasing: { done: Promise<void>; since: number; step: number } | null = null;
  private readonly watchdog: Watchdog;
  /** Bumped when the watchdog restarts renewal: an older renewal chain ends at its next step. */
  private renewGeneration = 0;
  private renewingSince: number | null = null;
  /** Renewals and in-doubt releases started, ever (the watchdog tells one from the next by them). */
  private renewals = 0;
  private releases = 0;
  private lastSettleAt: number | null = null;
  private startedAt: number | null = null;
  readonly retention: Retention;
  readonly stats = { claimed: 0, settled: 0, released: 0, reaped: 0, loopErrors: 0, inDoubtReleased: 0 };

  constructor(private readonly opts: ExecutorOptions) {
    this.owner = opts.owner ?? newId("exe");
    this.now = opts.now ?? Date.now;
    this.log = (opts.log ?? silentLogger).child({ owner: this.owner });
    this.ready = opts.readyIndex ? new ReadyIndex(opts.readyIndex, opts.db, this.log) : null;
    this.inDoubt = new InDoubtClaims(opts.db, this.log);
    this.runDeps = {
      transport: opts.transport,
      // Every executor sends notifications (notify.ts); a handler worker (opts.types) never claims them.
      handlers: {
        [NOTIFICATION_POOL]: notificationHandler({
          db: opts.db,
          transport: opts.transport,
          allowPrivateTargets: opts.allowPrivateTargets ?? false,
          now: this.now,
          mailer: opts.mailer,
          finished: (n) => opts.observer?.notificationFinished?.(n),
        }),
        ...opts.handlers,
      },
      allowPrivateTargets: opts.allowPrivateTargets ?? false,
      now: this.now,
      secrets: opts.secretsKey ? secretResolver(opts.db, opts.secretsKey) : undefined,
      maxResponseBytes: (type) => this.pools.get(type)?.config.maxResponseBytes ?? MAX_RESPONSE_BYTES,
    };
    this.cancels = new CancelWatch(opts.db, this.held, this.log);
    this.heartbeat = new Heartbeat(
      {
        db: opts.db,
        owner: this.owner,
        log: this.log,
        load: () =>
          Object.fromEntries(
            [...this.pools].map(([type, p]) => [type, { concurrency: p.config.concurrency, inFlight: p.inFlight }]),
          ),
        reapNow: () => {
          this.last.reap = 0;
          this.loop.wake();
        },
      },
      opts.heartbeat,
    );
    this.retention = new Retention({ db: opts.db, now: this.now, log: this.log }, opts.retention);
    this.slots = new StandbySlots({
      owner: this.owner,
      log: this.log,
      pool: (type) => this.pools.get(type),
      claim: (input) => this.inDoubt.send(input, (sent) => standbyClaim(opts.db, sent)),
      split: (input) => this.claimer.standbyInputs(input),
      hold: (h) => {
        if (!this.inDoubt.has(h.t.leaseToken)) this.held.set(h.t.id, h);
      },
      release: (list) => void this.release(list),
    });
    this.settler = new Settler({
      db: opts.db,
      batchSize: opts.settleBatch,
      lingerMs: opts.settleLingerMs,
      atCapLingerMs: opts.settleAtCapLingerMs,
      now: this.now,
      onSettled: (rows, freed) => {
        this.lastSettleAt = Date.now();
        const own = rows.filter((r) => !r.notification);
        this.stats.settled += own.length;
        this.opts.observer?.settled?.(own, "attempt");
        this.opts.tracer?.settled(own);
        // Retries are pending again, and a tenant at its cap has a slot again: the index learns them
        // (a claim that found the tenant at its cap set it aside). The settle has already claimed
        // for the freed tenants where the pool had room (handOff); slotsFreed covers the rest.
        const now = this.now();
        const ready = [...rows.filter((r) => r.status === "pending"), ...freed];
        void this.ready?.mark(ready.map((r) => ({ type: r.type, tenantId: r.tenantId, dueAtMs: now })));
        if (freed.length > 0) this.slotsFreed(freed);
      },
      onError: (err) => this.log.error("settle failed; will retry", { err }),
      onHandOffFailed: (err) =>
        this.log.error("a settle's hand-off claim failed; what it claimed is released by its token", { err }),
      // Each claim under a token of its own, noted if the settle's answer is lost (in-doubt.ts).
      handOff: (freed, atCap) =>
        this.stopping
          ? { claims: [], standby: [] }
          : {
              claims: this.claimer.handOff(freed).map(tokened),
              standby: this.slots.wanted(freed, atCap).map(tokened),
            },
      onInDoubt: (claims) => this.inDoubt.note(claims),
      onHandedOff: (input, report) => {
        if (this.claimer.handedOff(input, report, this.now())) this.loop.wake();
      },
      onStandby: (input, claimed) => this.slots.answered(input, claimed),
    });
    this.claimer = new Claimer({
      db: opts.db,
      owner: this.owner,
      pools: this.pools,
      ready: this.ready,
      log: this.log,
      inDoubt: this.inDoubt,
      dispatch: (pool, t, key) => this.dispatch(pool, t, key),
      stats: this.stats,
      observer: opts.observer,
      reachedCap: (type, reached) => {
        if (!this.stopping) this.slots.afterClaim(type, reached);
      },
    });
    this.materializer = new Materializer({
      db: opts.db,
      ready: this.ready,
      log: this.log,
      now: this.now,
      lookaheadMs: opts.lookaheadMs ?? 10_000,
      maxBackoffMs: opts.reapEveryMs ?? 1000,
      wakeClaims: () => this.loop.wake(),
      wakeClaimsAt: (atMs) => this.wakeClaimsAt(atMs),
    });
    const pollMs = opts.pollMs ?? 250;
    this.loop = new Loop({
      pass: async () => {
        const work = await this.tick();
        return work === 0 || this.allPoolsFull() ? pollMs : "now";
      },
      failed: "executor tick failed",
      log: this.log,
      onError: () => this.stats.loopErrors++,
      // Back off, but never past the reap interval: when Postgres returns after an outage, leases that
      // expired meanwhile are reaped within one interval. One failed connect per interval costs nothing.
      backoffMs: exponentialBackoff(opts.reapEveryMs ?? 1000, 6),
      // Claims start once the materializer has caught up (or failed a pass): after an outage it decides
      // the overdue fires written ahead before it (a misfire policy may skip them), and a claim taken
      // first would run them late on top of the policy's catch-up.
      after: this.materializer.caughtUp,
    });
    this.watchdog = new Watchdog({ log: this.log, stallMs: opts.stallMs ?? 30_000 });
    this.watchdog.watch("claim", this.loop);
    this.watchdog.watch("materialize", this.materializer.loop);
    this.watchdog.watch("retention", this.retention.loop);
    this.watchdog.watch("heartbeat", this.heartbeat.loop);
    this.watchdog.watch("renew", {
      busy: (now) => (this.renewingSince === null ? null : { ms: now - this.renewingSince, step: this.renewals }),
      restart: () => this.restartRenew(),
    });
    this.watchdog.watch("in_doubt_release", {
      busy: (now) => (this.releasing === null ? null : { ms: now - this.releasing.since, step: this.releasing.step }),
      // The next reap starts a release of its own; the stuck one's end is ignored.
      restart: () => (this.releasing = null),
    });
  }

  /** What readiness and the metrics read: the claim loop's and the settles' last progress, the stalls. */
  health(): ExecutorHealth {
    return {
      lastClaimAt: this.loop.lastSuccess,
      lastSettleAt: this.lastSettleAt,
      startedAt: this.startedAt,
      stalls: this.watchdog.stalls,
    };
  }

  /** Start order: wake hints first (none is missed), lease renewal before anything is claimed, then
   *  the claim loop and the materializer. */
  start(): this {
    if (this.started) return this;
    this.started = true;
    this.startedAt = Date.now();
    this.unsubscribe = this.opts.wake?.onWake(() => this.wake()) ?? null;
    this.scheduleRenew();
    this.cancels.start();
    this.heartbeat.start();
    this.retention.start();
    this.loop.start();
    this.materializer.start();
    this.watchdog.start();
    return this;
  }

  /** New work may be due now — possibly in a pool this executor has not seen yet. */
  wake(): void {
    this.last.pools = 0;
    this.loop.wake();
  }

  get inFlight(): number {
    return this.held.size;
  }

  /** Graceful stop: claim nothing more, let running work finish within graceMs, then abort and
   *  release what is left. No lease is left behind. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    await Promise.all([this.loop.stop(), this.materializer.stop(), this.slots.idle()]);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    // Runs already started may finish within the grace period; queued ones (claimed ahead) never start
    // once stopping, and are released with whatever is still running at the deadline.
    const deadline = this.now() + graceMs;
    while ([...this.held.values()].some((h) => h.started) && this.now() < deadline) await sleep(20);
    for (const h of this.held.values()) h.abort.abort("stop");
    // After the flush: a settle under way may hand off a claim (Claimer.handOff), whose triggers are
    // held, never started, and released here with the rest.
    await this.settler.flush();
    const unfinished = [...this.held.values()];
    if (unfinished.length > 0) await this.release(unfinished);
    await this.releasing?.done;
    // Claims still in doubt (a lost answer) are given back now, not left to wait out their lease: a
    // rolling deploy leaves nothing behind.
    this.stats.inDoubtReleased += await this.inDoubt.release();
    this.watchdog.stop();
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = null;
    this.cancels.stop();
    await Promise.all([this.heartbeat.stop(), this.retention.stop()]);
  }

  /** One pass of the loop; exposed for tests that step the executor by hand. */
  async tick(): Promise<number> {
    const now = this.now();
    let work = 0;
    if (now - this.last.pools >= (this.opts.poolRefreshMs ?? 2000)) {
      await this.refreshPools();
      this.last.pools = now;
    }
    if (now - this.last.reap >= (this.opts.reapEveryMs ?? 1000)) {
      try {
        await this.reap(now);
      } catch (err) {
        // On a Citus cluster one worker down fails the reaper's read of every shard: the claims of the
        // other nodes' tenants go on, and the reaper tries again next interval. On one PostgreSQL the
        // failure is the loop's (the claim would fail too): readFailed() throws it.
        (await layoutOf(this.opts.db)).readFailed(err);
        this.log.error("reap pass failed; retried next interval", { err });
      }
      this.last.reap = now;
    }
    if (!this.stopping) work += await this.claimer.pass(now);
    return work;
  }

  /** Expired leases reaped, and claims whose answer was lost given back (in-doubt.ts). The release
   *  runs beside the loop, one at a time: on a Citus cluster with a node down, its tenants' releases
   *  fail only after the node's connection does, and the other tenants' claims must not wait for that. */
  private async reap(now: number): Promise<void> {
    if (!this.releasing) {
      const releasing = {
        since: Date.now(),
        step: ++this.releases,
        done: this.inDoubt
          .release()
          .then((n) => void (this.stats.inDoubtReleased += n))
          .finally(() => {
            if (this.releasing === releasing) this.releasing = null;
          }),
      };
      this.releasing = releasing;
    }
    const reaped = await reapExpired(this.opts.db, now, (err) =>
      this.log.error("reaping a tenant's expired leases failed; retried next pass", { err }),
    );
    const own = reaped.filter((r) => !r.notification);
    this.stats.reaped += own.length;
    if (own.length > 0) this.opts.observer?.settled?.(own, "reaper");
    await this.ready?.mark(
      reaped.filter((r) => r.status === "pending").map((r) => ({ type: r.type, tenantId: r.tenantId, dueAtMs: now })),
    );
  }

  private wakeClaimsAt(atMs: number): void {
    const delay = atMs - this.now();
    if (delay <= 0) return this.loop.wake();
    if (atMs >= this.dueTimerAt) return; // an earlier wake-up is already set
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.dueTimerAt = atMs;
    this.dueTimer = setTimeout(() => {
      this.dueTimer = null;
      this.dueTimerAt = Infinity;
      this.loop.wake();
    }, delay);
  }

  /** Settled runs of at-cap tenants: each freed a slot its tenant may be waiting for. The settle
   *  claimed for them where this executor's pool had room (Claimer.handOff); where it had none, the
   *  other executors are asked to claim. */
  private slotsFreed(freed: Array<{ type: string }>): void {
    if (this.stopping) return;
    if (freed.some((r) => (this.pools.get(r.type)?.claimable ?? 0) === 0))
      void this.opts.wake?.wake?.().catch(() => {});
  }

  private allPoolsFull(): boolean {
    for (const p of this.pools.values()) if (p.wantsClaim) return false;
    return this.pools.size > 0;
  }

  private async refreshPools(): Promise<void> {
    const only = this.opts.types ? new Set(this.opts.types) : null;
    const handlerPools = only ? null : await handlerPoolTypes(this.opts.db);
    for (const cfg of await listPools(this.opts.db)) {
      if (only ? !only.has(cfg.type) : handlerPools!.has(cfg.type) && !this.runDeps.handlers[cfg.type]) {
        this.pools.delete(cfg.type); // a worker took it over: claim no more (what is held still settles)
        continue;
      }
      const p = this.pools.get(cfg.type);
      if (p) p.reconfigure(cfg);
      else this.pools.set(cfg.type, new Pool(cfg));
    }
  }

  /** `key`: where it starts among what the pool has queued (pool.ts, startKey). */
  private dispatch(pool: Pool, t: ClaimedTrigger, key: number): void {
    if (this.inDoubt.has(t.leaseToken)) return; // released by its token (in-doubt.ts), never run here
    const h: Held = { t, pool, started: false, standby: false, abort: new RunAbort() };
    this.held.set(t.id, h);
    this.run(h, key);
  }

  /** Queue a counted trigger in its pool. When a run ends, the next trigger its tenant holds on standby
   *  here takes its slot at once (standby-slots.ts): no round trip between the answer and the next
   *  request. */
  private run(h: Held, key: number): void {
    const { t, pool } = h;
    this.slots.count(t);
    let next: Held | undefined;
    pool.run(async () => {
      try {
        if (this.stopping) return; // not started before stop(): released by stop(), never run
        // Cancelled while it waited here (cancel-watch.ts): recorded, never sent.
        if (h.abort.aborted) {
          this.held.delete(t.id);
          return void (await this.cancelled(t, new Date(this.now()), 0, "cancelled before its request was sent"));
        }
        const sent = t.kind === "rerun" ? await this.withOverride(t) : t;
        if (!sent) return void this.held.delete(t.id);
        // At-most-once: recorded as sending before the request leaves, or not sent (at-most-once.ts).
        if (t.delivery === "at_most_once" && !(await markSending(this.opts.db, t, t.tenantId).catch(() => false)))
          return void this.held.delete(t.id);
        h.started = true;
        const timeoutMs = t.timeoutMs ?? pool.config.timeoutMs;
        const timer = setTimeout(() => h.abort.abort("timeout"), timeoutMs);
        const startedAt = new Date(this.now());
        const span = this.opts.tracer ? this.opts.tracer.start(sent, startedAt.getTime()) : null;
        const r = await runTrigger(sent, h.abort, this.runDeps, span);
        clearTimeout(timer);
        pool.recordRun(r.durationMs);
        // Aborted by stop() rather than by its timeout: released, not counted as an attempt.
        if (h.abort.reason === "stop") return void span?.end(r, null);
        this.held.delete(t.id);
        if (r.outcome === "cancelled") {
          span?.end(r, null);
          return void (await this.cancelled(t, startedAt, r.durationMs, r.error));
        }
        const decided = decideSettlement(t, r, startedAt, this.now());
        const settlement = t.delivery === "at_most_once" ? atMostOnce(decided, r) : decided;
        span?.end(r, settlement);
        next = this.stopping ? undefined : this.slots.takeOver(t);
        if (next) settlement.successor = { id: next.t.id, leaseToken: next.t.leaseToken, attempt: next.t.attempt };
        reportAttempt(this.log, this.opts.observer, this.owner, t, r, settlement, startedAt);
        // A settle that hands the slot over goes at once too: it also refills the standby.
        this.settler.add(settlement, this.now() + 600_000, t.atCap || next !== undefined, t);
        // Queued in the pool before this run's task returns, it starts in the pool slot this run frees
        // unless a trigger with an earlier WFQ slot is waiting for it (the pool's fairness is kept).
        if (next) this.run(next, startKey(next.t.vt, next.t.vclock, next.pool.lastStarted));
        // Half the queue ahead has drained (pool.ts): claim again now, while the other half still runs.
        // An at-cap tenant's slot frees only once settled: the settle wakes the claims (slotsFreed).
        else if (!t.atCap && pool.wantsClaim) this.loop.wake();
      } finally {
        this.slots.uncount(t, next !== undefined, this.stopping);
      }
    }, key);
  }

  /** A re-run as it is sent: its override (store trigger-verbs.ts) in place of its job's payload or its
   *  request target's body. Null when the override could not be read: the run is not started, and its
   *  lease expires and is reaped, as for any run this executor could not finish. */
  private async withOverride(t: ClaimedTrigger): Promise<ClaimedTrigger | null> {
    try {
      const o = await rerunOverride(this.opts.db, t.tenantId, t.id);
      if (!o) return t;
      return {
        ...t,
        ...("payload" in o ? { payload: o.payload } : {}),
        ...("body" in o && t.target ? { target: { ...t.target, body: o.body } } : {}),
      };
    } catch (err) {
      this.log.error("reading a re-run's override failed; its lease will expire and be reaped", { err });
      return null;
    }
  }

  /** A run cut for a newer trigger of its key: recorded cancelled, never retried (store on-busy.ts); one
   *  its user cancelled is already recorded (store trigger-verbs.ts), and this changes nothing. Its
   *  slot is free once recorded; the claim loop is woken for the trigger that waits for it. If the write
   *  fails, the lease expires, and the materializer pass cancels the reaped trigger. */
  private async cancelled(t: ClaimedTrigger, startedAt: Date, durationMs: number, error: string | null): Promise<void> {
    // At its tenant: on a Citus cluster its shard alone.
    await layoutOf(this.opts.db)
      .then((layout) =>
        layout.fanOut(
          [t],
          (x) => x.tenantId,
          (scope) => settleCancelled(this.opts.db, t, startedAt, durationMs, error ?? "cancelled", scope),
        ),
      )
      .then((written) => {
        for (const w of written) if (w.outcome.status === "rejected") throw w.outcome.reason;
      })
      .catch((err: unknown) =>
        this.log.error("recording a cancelled run failed; its lease will expire and be reaped", { err }),
      );
    this.loop.wake();
  }

  /** Standby triggers given back: pending again, their attempt number returned, their tenant's index
   *  entry marked (store release.ts). */
  private async release(list: Held[]): Promise<void> {
    for (const h of list) this.held.delete(h.t.id);
    const failed = (err: unknown) => {
      this.log.error("release failed; leases will expire and be reaped", { err });
      return 0;
    };
    const leases = list.map((h) => h.t);
    // As the layout writes: on a Citus cluster each tenant's at its tenant.
    const n = await layoutOf(this.opts.db)
      .then(async (layout) => {
        const written = await layout.fanOut(
          leases,
          (l) => l.tenantId,
          (scope, group) => releaseLeases(this.opts.db, group, scope),
        );
        return written.reduce(
          (sum, w) => sum + (w.outcome.status === "fulfilled" ? w.outcome.value : failed(w.outcome.reason)),
          0,
        );
      })
      .catch(failed);
    this.stats.released += n;
    await this.ready?.mark(list.map((h) => ({ type: h.t.type, tenantId: h.t.tenantId, dueAtMs: this.now() })));
    this.loop.wake();
  }

  /** Renew at a third of the shortest pool lease, at most every 5 s, so that no lease expires under a
   *  live run. Keeps going during stop()'s grace period, since draining runs still need their leases.
   *  Before pools are loaded nothing is held (renew is a no-op); re-check soon so the cadence follows
   *  the first load. */
  private scheduleRenew(): void {
    const generation = this.renewGeneration;
    let every = this.pools.size === 0 ? 250 : 5_000;
    for (const p of this.pools.values()) every = Math.min(every, p.config.leaseMs / 3);
    this.renewTimer = setTimeout(
      async () => {
        this.renewingSince = Date.now();
        this.renewals++;
        await this.renew();
        if (generation !== this.renewGeneration) return; // restarted meanwhile: the new chain goes on
        this.renewingSince = null;
        if (this.renewTimer) this.scheduleRenew();
      },
      Math.max(50, every),
    );
  }

  /** A renewal that never ended (watchdog.ts): abandoned, and a new chain started. */
  private restartRenew(): void {
    if (this.renewTimer === null) return; // stopped
    this.renewGeneration++;
    this.renewingSince = null;
    clearTimeout(this.renewTimer);
    this.scheduleRenew();
  }

  /** Extend the lease of every trigger still running here; forget the ones that were lost (reaped while we stalled). */
  private async renew(): Promise<void> {
    const byLease = new Map<number, Array<{ id: string; leaseToken: string; tenantId: string }>>();
    for (const h of this.held.values()) {
      const list = byLease.get(h.pool.config.leaseMs) ?? [];
      list.push(h.t);
      byLease.set(h.pool.config.leaseMs, list);
    }
    if (byLease.size === 0) return;
    // As the layout writes: on a Citus cluster each tenant's leases at its tenant, a few at once.
    let layout: Layout;
    try {
      layout = await layoutOf(this.opts.db);
    } catch (err) {
      // The layout not read yet and Postgres away: nothing can be renewed now; the next beat tries.
      this.log.warn("lease renewal could not read the database's layout; retried", { err });
      return;
    }
    for (const [leaseMs, all] of byLease)
      await layout.fanOut(
        all,
        (l) => l.tenantId,
        (scope, group) => this.renewGroup(group, leaseMs, scope),
      );
  }

  /** Renew `leases`; forget the ones lost. Never throws (a failure is logged and counted). */
  private async renewGroup(
    leases: Array<{ id: string; leaseToken: string }>,
    leaseMs: number,
    scope: Scope,
  ): Promise<void> {
    try {
      const kept = await renewLeases(this.opts.db, leases, leaseMs, scope);
      for (const l of leases) {
        const h = this.held.get(l.id);
        if (kept.has(l.id) || !h) continue;
        this.log.warn("lease lost", { triggerId: l.id });
        // Not started yet on standby: it never will be here (another executor may hold it now).
        if (h.standby) {
          this.slots.drop(h);
          this.held.delete(h.t.id);
        }
      }
    } catch (err) {
      this.log.error("lease renewal failed", { err });
      this.opts.observer?.leaseRenewalFailed?.(leases.length);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const tokened = <T extends object>(input: T): T & { leaseToken: string } => ({
  ...input,
  leaseToken: crypto.randomUUID(),
});
