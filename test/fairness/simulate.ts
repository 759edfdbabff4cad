// A discrete-event pool for fairness tests: real claims and settles against real Postgres, with
// simulated job durations (no sleeping). Each claim asks for the pool's free slots; claimed triggers
// "finish" after their tenant's duration in simulated time and are settled with that duration, so the
// worker-time charge of the real settle statement is what shapes the next claims.
import { claim, settle, type Db } from "@fairway/store";

export interface SimResult {
  /** Completed triggers per tenant. */
  count: Map<string, number>;
  /** Worker-ms used per tenant. */
  time: Map<string, number>;
  claims: number;
  /** Simulated ms at which each tenant's last trigger finished. */
  doneAt: Map<string, number>;
  /** Claim cycle in which each tenant's last trigger was claimed. */
  lastCycle: Map<string, number>;
}

export async function simulatePool(
  db: Db,
  opts: {
    type: string;
    capacity: number;
    durationMs: (tenantId: string) => number;
    stopAfter: (r: SimResult) => boolean;
    maxClaims?: number;
  },
): Promise<SimResult> {
  const r: SimResult = { count: new Map(), time: new Map(), claims: 0, doneAt: new Map(), lastCycle: new Map() };
  let now = 0;
  let running: Array<{ end: number; tenantId: string; s: Parameters<typeof settle>[1][number] }> = [];
  while (!opts.stopAfter(r) && r.claims < (opts.maxClaims ?? 5000)) {
    const free = opts.capacity - running.length;
    if (free > 0) {
      const got = await claim(db, { type: opts.type, budget: free, owner: "sim", leaseMs: 3_600_000 });
      r.claims++;
      for (const t of got) {
        const d = opts.durationMs(t.tenantId);
        r.lastCycle.set(t.tenantId, r.claims);
        running.push({
          end: now + d,
          tenantId: t.tenantId,
          s: {
            id: t.id,
            leaseToken: t.leaseToken,
            attempt: t.attempt,
            status: "succeeded",
            startedAt: new Date(),
            durationMs: d,
            outcome: "success",
          },
        });
      }
      if (got.length === 0 && running.length === 0) break; // nothing left anywhere
    }
    // Advance to the next finish and settle everything finishing then.
    now = Math.min(...running.map((x) => x.end));
    const done = running.filter((x) => x.end <= now);
    running = running.filter((x) => x.end > now);
    await settle(
      db,
      done.map((x) => x.s),
    );
    for (const x of done) {
      r.count.set(x.tenantId, (r.count.get(x.tenantId) ?? 0) + 1);
      r.time.set(x.tenantId, (r.time.get(x.tenantId) ?? 0) + x.s.durationMs);
      r.doneAt.set(x.tenantId, now);
    }
  }
  return r;
}

export function shares(m: Map<string, number>, ids: string[]): number[] {
  const total = ids.reduce((s, id) => s + (m.get(id) ?? 0), 0);
  return ids.map((id) => (m.get(id) ?? 0) / total);
}
