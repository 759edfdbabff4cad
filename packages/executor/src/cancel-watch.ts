// onBusy cancel_running (docs/fairness.md, "onBusy"): how a run learns, on whichever executor holds
// it, that a newer trigger of its key asked it to stop. Every CANCEL_POLL_MS, while this executor runs
// keyed triggers, one statement reads which of them carry the flag the materializer pass set
// (store/sql/on-busy.ts); those runs are aborted (their request cut) and recorded `cancelled`. So a run
// stops at most a materializer pass (~100 ms) plus one poll after the new trigger is due. A poll, not
// LISTEN/NOTIFY: it works the same through a transaction pooler, on Hyperdrive and after a reconnect.
import type { Logger } from "@fairway/core";
import { cancelRequested, isDistributed, type Db } from "@fairway/store";
import { byTenant, eachTenant } from "./per-tenant.ts";
import type { Held } from "./standby-slots.ts";

const CANCEL_POLL_MS = 500;

export class CancelWatch {
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly db: Db,
    private readonly held: Map<string, Held>,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.timer) return;
    const tick = async () => {
      await this.poll();
      if (this.timer) this.timer = setTimeout(tick, CANCEL_POLL_MS);
    };
    this.timer = setTimeout(tick, CANCEL_POLL_MS);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Only keyed runs already started can be asked to stop; with none, no statement. On a Citus cluster,
   *  a statement per tenant, on its shard alone (per-tenant.ts). */
  async poll(): Promise<void> {
    const runs: Held[] = [];
    for (const h of this.held.values()) if (h.started && h.t.key !== null && !h.abort.aborted) runs.push(h);
    if (runs.length === 0) return;
    const failed = (err: unknown) => this.log.warn("cancel poll failed; retried at the next poll", { err });
    const stop = (ids: string[]) => {
      for (const id of ids) this.held.get(id)?.abort.abort("cancel");
    };
    try {
      if (!(await isDistributed(this.db)))
        return stop(
          await cancelRequested(
            this.db,
            runs.map((h) => h.t.id),
          ),
        );
      const outcomes = await eachTenant(
        byTenant(runs, (h) => h.t.tenantId),
        (tenantId, group) =>
          cancelRequested(
            this.db,
            group.map((h) => h.t.id),
            tenantId,
          ),
      );
      for (const o of outcomes) {
        if (o.status === "fulfilled") stop(o.value);
        else failed(o.reason);
      }
    } catch (err) {
      failed(err);
    }
  }
}
