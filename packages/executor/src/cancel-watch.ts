// How a run learns, on whichever executor holds it, that it must stop: its user cancelled it (POST
// /v1/triggers/{id}/cancel, store/sql/trigger-verbs.ts), or a newer trigger of its key asked it to
// (onBusy cancel_running, docs/fairness.md; the materializer pass sets the flag, store/sql/on-busy.ts).
// Every CANCEL_POLL_MS, while this executor holds triggers, one statement reads which of them carry
// the flag; those runs are aborted (their request cut, or never sent if not started yet) and recorded
// `cancelled`. So a run stops within a poll of its cancel. A poll, not LISTEN/NOTIFY: it works the same
// through a transaction pooler, on Hyperdrive and after a reconnect.
import type { Logger } from "@fairway/core";
import { cancelRequested, layoutOf, type Db } from "@fairway/store";
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

  /** Every trigger held, started or waiting for its slot; with none, no statement. On a Citus cluster,
   *  a statement per tenant, on its shard alone (the layout's fanOut). */
  async poll(): Promise<void> {
    const runs: Held[] = [];
    for (const h of this.held.values()) if (!h.abort.aborted) runs.push(h);
    if (runs.length === 0) return;
    const failed = (err: unknown) => this.log.warn("cancel poll failed; retried at the next poll", { err });
    const stop = (ids: string[]) => {
      for (const id of ids) this.held.get(id)?.abort.abort("cancel");
    };
    try {
      const written = await (await layoutOf(this.db)).fanOut(
        runs,
        (h) => h.t.tenantId,
        (scope, group) =>
          cancelRequested(
            this.db,
            group.map((h) => h.t.id),
            scope,
          ),
      );
      for (const w of written) {
        if (w.outcome.status === "fulfilled") stop(w.outcome.value);
        else failed(w.outcome.reason);
      }
    } catch (err) {
      failed(err);
    }
  }
}
