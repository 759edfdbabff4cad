// Tell the executors that a tenant has new pending work: the ready-tenant index learns the tenant, and
// idle executors wake if it is due now. Best effort — Redis is never needed for correctness (executors
// poll and sweep Postgres), so a coordinator error is logged, never surfaced to the caller.
import type { Logger } from "@fairway/core";
import type { ApiCoordinator } from "./env.ts";

export function announceWork(
  coord: ApiCoordinator,
  log: Logger,
  work: { type: string; tenantId: string; dueAt: Date | null },
  now: number,
): void {
  const due = work.dueAt?.getTime() ?? now;
  coord.markReady(work.type, work.tenantId, due).catch((err) => log.warn("ready index unavailable", { err }));
  if (due <= now + 1000) coord.wake().catch(() => {});
}
