// onBusy cancel_running (docs/fairness.md, "onBusy"): how a run learns, on whichever executor holds
// it, that a newer trigger of its key asked it to stop. Every CANCEL_POLL_MS, while this executor runs
// keyed triggers, one statement reads which of them carry the flag the materializer pass set
// (store/sql/on-busy.ts); those runs are aborted (their request cut) and recorded `cancelled`. So a run
// stops at most a materializer pass (~100 ms) plus one poll after the new trigger is due. A poll, not
// LISTEN/NOTIFY: it works the same through a transaction pooler, on Hyperdrive and after a reconnect.
import type { Logger } from "@fairway/core";
import { cancelRequested, type Db } from "@fairway/store";
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

  /** Only keyed runs already started can be asked to stop; with none, no statement. */
  async poll(): Promise<void> {
    const ids: string[] = [];
    for (const h of this.held.values()) if (h.started && h.t.key !== null && !h.abort.aborted) ids.push(h.t.id);
    if (ids.length === 0) return;
    try {
      for (const id of await cancelRequested(this.db, ids)) this.held.get(id)?.abort.abort("cancel");
    } catch (err) {
      this.log.warn("cancel poll failed; retried at the next poll", { err });
    }
  }
}
