// What /readyz asks of this process's executor: has its claim loop ended a pass lately? A pass ends
// every poll interval when all is well, with or without work; one that has not ended for `stallMs`
// (Postgres unreachable, a loop stuck before its watchdog restarts it) means this process is not
// delivering, whatever else answers.
import type { Executor } from "@fairway/executor";

export function executorReadiness(executor: Pick<Executor, "health">, stallMs: number): () => string | null {
  return () => {
    const h = executor.health();
    const since = h.lastClaimAt ?? h.startedAt;
    if (since === null) return null; // not started yet: the HTTP port opens first
    const idleMs = Date.now() - since;
    return idleMs > stallMs
      ? `this process's executor has ended no claim pass for ${Math.round(idleMs / 1000)} s (more than ${stallMs / 1000} s)`
      : null;
  };
}
