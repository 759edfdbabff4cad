// The retention loop (store retention.ts): every `everyMs`, deletes expired history in batches of
// `batch` rows until a batch comes back short, pausing between batches so that it spends at most
// `share` of its time in Postgres and never holds a connection long next to claims and settles. Each batch starts where the last one
// ended (a cursor over the jobs), so a pass reads what it deletes once. Every executor runs it;
// batches lock SKIP LOCKED, so two executors never wait on each other (both may read the same rows,
// and one of them deletes each).
import type { Logger } from "@fairway/core";
import {
  deleteExpiredJobs,
  deleteExpiredTriggers,
  deleteIdleKeys,
  deleteStaleFolds,
  layoutOf,
  type Db,
  type FoldCursor,
  type RetentionBatch,
  type RetentionCursor,
} from "@fairway/store";
import { Loop } from "./loop.ts";

export interface RetentionOptions {
  /** Default 60 000 ms; 0 turns retention off in this executor. */
  everyMs?: number;
  /** Rows per statement. Default 1000. */
  batch?: number;
  /** Least pause between batches. Default 20 ms. */
  pauseMs?: number;
  /** At most this share of the pass's time is spent in its statements: after a batch that took t ms
   *  it pauses t × (1 − share) ÷ share (and at least pauseMs). Default 0.2: a Postgres backend busy
   *  deleting beside the claims and settles takes CPU from them on a small machine, and expired
   *  history can wait. 1: back to back. */
  share?: number;
}

export class Retention {
  /** stop() ends a pass before its next batch of any kind, and wakes a pause between two (loop.ts). */
  readonly loop: Loop;

  constructor(
    private readonly deps: { db: Db; now: () => number; log: Logger },
    private readonly opts: RetentionOptions = {},
  ) {
    const everyMs = opts.everyMs ?? 60_000;
    this.loop = new Loop({
      pass: async () => {
        const d = await this.pass();
        if (d.triggers + d.jobs + d.folds + d.keys > 0) this.deps.log.info("retention deleted expired history", d);
        return everyMs;
      },
      failed: "retention pass failed",
      log: deps.log,
      backoffMs: () => everyMs,
    });
  }

  start(): void {
    if ((this.opts.everyMs ?? 60_000) > 0) this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** One full pass; returns what it deleted. On the per-tenant layout (docs/scaling.md) the triggers,
   *  jobs and keys are deleted tenant by tenant, each batch a statement on the tenant's shard group (a
   *  batch across tenants would lock rows on every node in one transaction): the tenants are listed
   *  page by page, and a tenant with nothing expired costs one short statement of each kind. */
  async pass(): Promise<{ triggers: number; jobs: number; folds: number; keys: number }> {
    const out = { triggers: 0, jobs: 0, folds: 0, keys: 0 };
    const add = (d: { triggers: number; jobs: number; keys: number; folds: number }) => {
      out.triggers += d.triggers;
      out.jobs += d.jobs;
      out.keys += d.keys;
      out.folds += d.folds;
    };
    // Every tenant at once, or (on a Citus cluster) each tenant in turn; a tenant whose statements fail
    // (its node down) waits for the next pass, and the others go on.
    await (await layoutOf(this.deps.db)).eachScope(
      this.deps.db,
      async (scope) => add(await this.tenantPass(scope.tenantId)),
      () => this.loop.stopping,
      (err, scope) => this.deps.log.error("retention failed for a tenant", { tenantId: scope.tenantId, err }),
    );
    return out;
  }

  /** Expired triggers, jobs, idle keys and stale fold windows: of one tenant, or (undefined) of every
   *  tenant at once. */
  private async tenantPass(
    tenantId: string | undefined,
  ): Promise<{ triggers: number; jobs: number; keys: number; folds: number }> {
    const out = { triggers: 0, jobs: 0, keys: 0, folds: 0 };
    for (const [what, del] of [
      ["triggers", deleteExpiredTriggers],
      ["jobs", deleteExpiredJobs],
    ] as const) {
      let after = null as RetentionCursor | null;
      out[what] = await this.batches(async () => {
        const n: RetentionBatch = await del(this.deps.db, new Date(this.deps.now()), this.batch, after, tenantId);
        // A batch that deleted nothing and ends where it began found only rows held elsewhere, at one
        // instant of one job (manual runs): the pass goes on from the next job, and the rest of this
        // one waits for the next pass. (Job ids are printable: \u0001 sorts after the id, before any
        // longer id.)
        const stuck: boolean =
          n.deleted === 0 && n.next !== null && n.next.jobId === after?.jobId && n.next.at === after?.at;
        after = stuck && n.next ? { jobId: `${n.next.jobId}\u0001` } : n.next;
        return n;
      });
    }
    // Idle fairness keys: what a batch leaves (held elsewhere) the next pass takes.
    out.keys = await this.batches(() => deleteIdleKeys(this.deps.db, new Date(this.deps.now()), this.batch, tenantId));
    // Fold rows held elsewhere are not found (SKIP LOCKED in the select), so the cursor always moves.
    let fold: FoldCursor | null = null;
    out.folds = await this.batches(async () => {
      const n = await deleteStaleFolds(this.deps.db, new Date(this.deps.now()), this.batch, fold, tenantId);
      fold = n.next;
      return n;
    });
    return out;
  }

  private get batch(): number {
    return this.opts.batch ?? 1000;
  }

  /** Runs `one` until a batch comes back short or stop() is called, paced by `share`; the rows it
   *  deleted. */
  private async batches(one: () => Promise<{ deleted: number; found: number }>): Promise<number> {
    const share = Math.min(1, Math.max(0.01, this.opts.share ?? 0.2));
    let deleted = 0;
    while (!this.loop.stopping) {
      const t0 = performance.now();
      const n = await one();
      const took = performance.now() - t0;
      deleted += n.deleted;
      if (n.found < this.batch) break;
      if (!(await this.loop.pause(Math.max(this.opts.pauseMs ?? 20, (took * (1 - share)) / share)))) break;
    }
    return deleted;
  }
}
