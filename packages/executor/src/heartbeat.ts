// The executor's heartbeat (store executors.ts): every `everyMs` it writes its row — identity and, per
// pool, concurrency and triggers in flight — and looks for executors whose heartbeat stopped for longer
// than their timeout. Their leases are cut to now, and this executor's reaper runs at once: a
// `kill -9`'d executor's triggers are re-run after about the heartbeat timeout, not the pool's lease
// (test/faults/kill9-heartbeat.test.ts). Any live executor does this for all; the work is idempotent.
import type { Logger } from "@fairway/core";
import {
  dropOldExecutors,
  expireLostExecutors,
  heartbeat,
  markExecutorStopped,
  type Db,
  type ExecutorPoolLoad,
} from "@fairway/store";
import { Loop } from "./loop.ts";

/** Kept equal to the packages' version (package.json). */
const FAIRWAY_VERSION = "0.1.0";

export interface HeartbeatOptions {
  /** Default 5000 ms. */
  everyMs?: number;
  /** How long a silent executor is taken for alive. Longer than the longest stall a live executor may
   *  have (a blocked event loop, a slow database): a stalled executor's leases are reaped and its runs
   *  may run twice (at least once), as after a lease expiry. Default 30 000 ms. */
  timeoutMs?: number;
  host?: string;
  pid?: number;
  version?: string;
}

export interface HeartbeatDeps {
  db: Db;
  owner: string;
  log: Logger;
  /** Per pool type: concurrency and triggers in flight here. */
  load: () => Record<string, ExecutorPoolLoad>;
  /** Leases of lost executors were cut: reap now. */
  reapNow: () => void;
}

export class Heartbeat {
  readonly loop: Loop;
  private readonly startedAt = new Date();
  private passes = 0;

  constructor(
    private readonly deps: HeartbeatDeps,
    private readonly opts: HeartbeatOptions = {},
  ) {
    const everyMs = opts.everyMs ?? 5_000;
    this.loop = new Loop({
      pass: async () => {
        await this.beat();
        return everyMs;
      },
      failed: "heartbeat failed",
      log: deps.log,
      backoffMs: () => everyMs,
    });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await markExecutorStopped(this.deps.db, this.deps.owner).catch((err) =>
      this.deps.log.warn("marking the executor stopped failed", { err }),
    );
  }

  /** One beat: write this executor's row, then expire lost ones. */
  async beat(): Promise<void> {
    const { db, owner } = this.deps;
    await heartbeat(db, {
      id: owner,
      host: this.opts.host ?? "unknown",
      pid: this.opts.pid ?? globalThis.process?.pid ?? 0,
      version: this.opts.version ?? FAIRWAY_VERSION,
      startedAt: this.startedAt,
      heartbeatTimeoutMs: this.opts.timeoutMs ?? 30_000,
      pools: this.deps.load(),
    });
    const { lost, cut } = await expireLostExecutors(db);
    for (const id of lost)
      this.deps.log.warn("executor lost: no heartbeat within its timeout; its leases are reaped", { executor: id });
    if (cut > 0) this.deps.reapNow();
    if (++this.passes % 100 === 0) await dropOldExecutors(db);
  }
}
