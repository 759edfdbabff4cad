// The executor (DESIGN.md §2). Two loops: the materializer turns due cron fires into triggers; the
// claim loop reaps expired leases, claims each pool's fair share (ahead of its free slots, pool.ts),
// dispatches into the pool and settles in batches. Runtime-neutral: it is handed its database, transport,
// coordinator and clock. The loops never die (a failed step counts as no work and is logged) and never
// spin (they sleep, interruptibly, when there is nothing to do). Every claimed trigger is settled or
// released, whatever happens.
import { newId, silentLogger, type Logger } from "@fairway/core";
import { claim, handlerPoolTypes, listPools, materialize, releaseLeases, renewLeases, type ClaimedTrigger, type Db } from "@fairway/store";
import { Pool, startKey } from "./pool.ts";
import { ReadyIndex, type ReadyIndexCoordinator } from "./ready-index.ts";
import { reapExpired } from "./reaper.ts";
import { runTrigger, type Handler, type RunDeps } from "./run-trigger.ts";
import { Settler, decideSettlement } from "./settler.ts";
import { Waker } from "./sleep.ts";
import { RunAbort, type Transport } from "./transport.ts";

export interface WakeSource {
  onWake(listener: () => void): () => void;
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
  /** Cron fires are materialized this far ahead, so they are claimable the moment they are due. Default
   *  10 000 ms: 10k jobs due in one second take about a second to write, and a 1 s lookahead wrote most
   *  of them after their second (cron-burst, docs/bench.md). Exclusive overlap policies are planned at
   *  most 1 s ahead whatever this says (core EXCLUSIVE_LOOKAHEAD_MS). */
  lookaheadMs?: number;
  /** Reaper interval. Default 1000 ms. */
  reapEveryMs?: number;
  /** Pool config refresh. Default 2000 ms. */
  poolRefreshMs?: number;
  allowPrivateTargets?: boolean;
  /** Clock (ms). Default Date.now. */
  now?: () => number;
  log?: Logger;
  /** Settle batching (settler.ts): rows per statement, and how long a result may wait to share one —
   *  less when its tenant is at its in-flight cap. */
  settleBatch?: number;
  settleLingerMs?: number;
  settleAtCapLingerMs?: number;
}

/** A claimed trigger not yet finished (queued or running in its pool). Finished ones belong to the settler. */
interface Held {
  t: ClaimedTrigger;
  pool: Pool;
  started: boolean;
  abort: RunAbort;
}

export class Executor {
  readonly owner: string;
  private pools = new Map<string, Pool>();
  private held = new Map<string, Held>();
  private waker = new Waker();
  private settler: Settler;
  private stopping = false;
  private loopDone: Promise<void> | null = null;
  private materializerDone: Promise<void> | null = null;
  private materializerWaker = new Waker();
  private dueTimer: ReturnType<typeof setTimeout> | null = null;
  private dueTimerAt = Infinity;
  private renewTimer: ReturnType<typeof setTimeout> | null = null;
  private unsubscribe: (() => void) | null = null;
  private last = { reap: 0, pools: 0 };
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly ready: ReadyIndex | null;
  private readonly runDeps: RunDeps;
  readonly stats = { claimed: 0, settled: 0, released: 0, reaped: 0, loopErrors: 0 };

  constructor(private readonly opts: ExecutorOptions) {
    this.owner = opts.owner ?? newId("exe");
    this.now = opts.now ?? Date.now;
    this.log = (opts.log ?? silentLogger).child({ owner: this.owner });
    this.ready = opts.readyIndex ? new ReadyIndex(opts.readyIndex, opts.db, this.log) : null;
    this.runDeps = {
      transport: opts.transport,
      handlers: opts.handlers ?? {},
      allowPrivateTargets: opts.allowPrivateTargets ?? false,
      now: this.now,
    };
    this.settler = new Settler({
      db: opts.db,
      batchSize: opts.settleBatch,
      lingerMs: opts.settleLingerMs,
      atCapLingerMs: opts.settleAtCapLingerMs,
      now: this.now,
      onSettled: (rows) => {
        this.stats.settled += rows.length;
        // Retries are pending again: the index learns their tenants (the claimer finds the exact time).
        const retries = rows.filter((r) => r.status === "pending");
        void this.ready?.mark(retries.map((r) => ({ type: r.type, tenantId: r.tenantId, dueAtMs: this.now() })));
      },
      onError: (err) => this.log.error("settle failed; will retry", { err }),
    });
  }

  start(): this {
    if (this.loopDone) return this;
    this.unsubscribe = this.opts.wake?.onWake(() => this.wake()) ?? null;
    this.scheduleRenew();
    this.loopDone = this.loop();
    this.materializerDone = this.materializeLoop();
    return this;
  }

  /** New work may be due now — possibly in a pool this executor has not seen yet. */
  wake(): void {
    this.last.pools = 0;
    this.waker.wake();
  }

  get inFlight(): number {
    return this.held.size;
  }

  /** Graceful stop: claim nothing more, let running work finish within graceMs, then abort and
   *  release what is left. No lease is left behind. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    this.waker.wake();
    this.unsubscribe?.();
    this.materializerWaker.wake();
    await Promise.all([this.loopDone, this.materializerDone]);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    // Runs already started may finish within the grace period; queued ones (claimed ahead) never start
    // once stopping, and are released with whatever is still running at the deadline.
    const deadline = this.now() + graceMs;
    while ([...this.held.values()].some((h) => h.started) && this.now() < deadline) await sleep(20);
    const unfinished = [...this.held.values()];
    for (const h of unfinished) h.abort.abort("stop");
    await this.settler.flush();
    if (unfinished.length > 0) {
      const n = await releaseLeases(this.opts.db, unfinished.map((h) => h.t)).catch((err) => {
        this.log.error("release failed; leases will expire and be reaped", { err });
        return 0;
      });
      this.stats.released += n;
      for (const h of unfinished) this.held.delete(h.t.id);
      await this.ready?.mark(unfinished.map((h) => ({ type: h.t.type, tenantId: h.t.tenantId, dueAtMs: this.now() })));
    }
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = null;
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
      const reaped = await reapExpired(this.opts.db, now);
      this.stats.reaped += reaped.length;
      this.last.reap = now;
      await this.ready?.mark(reaped.filter((r) => r.status === "pending").map((r) => ({ type: r.type, tenantId: r.tenantId, dueAtMs: now })));
    }
    for (const [type, pool] of this.pools) {
      if (!pool.wantsClaim || this.stopping) continue;
      const budget = pool.claimable;
      const candidates = this.ready ? await this.ready.candidates(type, now, budget) : undefined;
      if (candidates && candidates.length === 0) continue; // nothing due: no query at all
      const claimStarted = performance.now();
      const claimed = await claim(this.opts.db, {
        type,
        budget,
        owner: this.owner,
        leaseMs: pool.config.leaseMs,
        candidates: candidates?.map((c) => c.tenantId),
      });
      this.stats.claimed += claimed.length;
      if (claimed.length > 0) pool.recordClaim(performance.now() - claimStarted);
      if (candidates) await this.ready!.afterClaim(type, now, candidates, claimed);
      else await this.ready?.mark(claimed.map((c) => ({ type, tenantId: c.tenantId, dueAtMs: now })));
      // One base for the whole claim: the slot in service before any of it started (pool.ts, startKey).
      const started = pool.lastStarted;
      for (const t of claimed) this.dispatch(pool, t, startKey(t.vt, t.vclock, started));
      // Anything claimed: claim again at once while slots are free (a claim looks at a bounded part of
      // each tenant's backlog, so a short claim does not mean the backlog is empty).
      if (claimed.length > 0) work++;
    }
    return work;
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      try {
        const work = await this.tick();
        failures = 0;
        if (work === 0 || this.allPoolsFull()) await this.waker.sleep(this.opts.pollMs ?? 250);
      } catch (err) {
        this.stats.loopErrors++;
        failures++;
        this.log.error("executor tick failed", { err });
        // Back off, but never past the reap interval: when Postgres returns after an outage, leases
        // that expired meanwhile are reaped within one interval, not after a 5 s backoff
        // (test/faults/postgres-outage.test.ts). One failed connect per interval costs nothing.
        await this.waker.sleep(Math.min(this.opts.reapEveryMs ?? 1000, 100 * 2 ** Math.min(failures, 6)));
      }
    }
  }

  /** Cron fires become triggers on a loop of their own, so a burst of due jobs (10k at one second) is
   *  written back to back instead of 500 per claim-loop pass. Fires are written `lookaheadMs` ahead; the
   *  claim loop is woken at each instant this executor wrote, so they are claimed on the second. */
  private async materializeLoop(): Promise<void> {
    const batch = 500;
    // Instants written and not yet reached. The claim loop's timer holds only the earliest, and with
    // fires written seconds ahead every later instant would otherwise wait for an idle poll; each pass
    // re-arms it with the next one (a handful of entries: one per distinct second in the lookahead).
    const upcoming = new Set<number>();
    let failures = 0;
    while (!this.stopping) {
      try {
        const m = await materialize(this.opts.db, new Date(this.now()), this.opts.lookaheadMs ?? 10_000, batch);
        failures = 0;
        for (const f of m.failed) this.log.error("cron job paused: its schedule cannot be computed", f);
        await this.ready?.mark(m.ready);
        const now = this.now();
        let dueNow = false;
        for (const r of m.ready) {
          if (r.dueAtMs > now) upcoming.add(r.dueAtMs);
          else dueNow = true;
        }
        if (dueNow) this.waker.wake(); // written already due (late, or a catch-up): claim at once
        let next = Infinity;
        for (const at of upcoming) {
          if (at <= now) upcoming.delete(at);
          else if (at < next) next = at;
        }
        if (next < Infinity) this.wakeClaimsAt(next);
        if (m.jobs >= batch) continue; // more due jobs: next pass at once
      } catch (err) {
        failures++;
        this.log.error("materializer pass failed", { err });
      }
      await this.materializerWaker.sleep(failures ? Math.min(this.opts.reapEveryMs ?? 1000, 100 * 2 ** failures) : 100);
    }
  }

  private wakeClaimsAt(atMs: number): void {
    const delay = atMs - this.now();
    if (delay <= 0) return this.waker.wake();
    if (atMs >= this.dueTimerAt) return; // an earlier wake-up is already set
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.dueTimerAt = atMs;
    this.dueTimer = setTimeout(() => {
      this.dueTimer = null;
      this.dueTimerAt = Infinity;
      this.waker.wake();
    }, delay);
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
    const h: Held = { t, pool, started: false, abort: new RunAbort() };
    this.held.set(t.id, h);
    pool.run(async () => {
      if (this.stopping) return; // not started before stop(): released by stop(), never run
      h.started = true;
      const timeoutMs = t.timeoutMs ?? pool.config.timeoutMs;
      const timer = setTimeout(() => h.abort.abort("timeout"), timeoutMs);
      const startedAt = new Date(this.now());
      const r = await runTrigger(t, h.abort, this.runDeps);
      clearTimeout(timer);
      pool.recordRun(r.durationMs);
      // Aborted by stop() rather than by its timeout: released, not counted as an attempt.
      if (h.abort.reason === "stop") return;
      this.held.delete(t.id);
      this.settler.add(decideSettlement(t, r, startedAt, this.now()), this.now() + 600_000, t.atCap);
      // Half the queue ahead has drained (pool.ts): claim again now, while the other half still runs.
      if (pool.wantsClaim) this.waker.wake();
    }, key);
  }

  /** Renew at a third of the shortest pool lease, at most every 5 s. A fixed 5 s let any lease ≤ 5 s
   *  expire under a live run, which the reaper then re-ran (test/faults/lease-renewal.test.ts). Keeps
   *  going during stop()'s grace period, since draining runs still need their leases. Before pools are
   *  loaded nothing is held (renew is a no-op); re-check soon so the cadence follows the first load. */
  private scheduleRenew(): void {
    let every = this.pools.size === 0 ? 250 : 5_000;
    for (const p of this.pools.values()) every = Math.min(every, p.config.leaseMs / 3);
    this.renewTimer = setTimeout(async () => {
      await this.renew();
      if (this.renewTimer) this.scheduleRenew();
    }, Math.max(50, every));
  }

  /** Extend the lease of every trigger still running here; forget the ones that were lost (reaped while we stalled). */
  private async renew(): Promise<void> {
    const byLease = new Map<number, Array<{ id: string; leaseToken: string }>>();
    for (const h of this.held.values()) {
      const list = byLease.get(h.pool.config.leaseMs) ?? [];
      list.push(h.t);
      byLease.set(h.pool.config.leaseMs, list);
    }
    for (const [leaseMs, leases] of byLease) {
      try {
        const kept = await renewLeases(this.opts.db, leases, leaseMs);
        for (const l of leases) if (!kept.has(l.id) && this.held.has(l.id)) this.log.warn("lease lost", { triggerId: l.id });
      } catch (err) {
        this.log.error("lease renewal failed", { err });
      }
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
