// Shared set-up of the fairness scenarios that deliver over HTTP (cap-utilisation, short-window-share):
// tenants whose triggers are due at once and target a SlowTarget, and an executor wired as the server
// wires it by default (in-process coordinator as wake source and ready index, the default idle poll).
import { createMemoryCoordinator } from "@fairway/coord";
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { sql, type Db } from "@fairway/store";
import { seedTenants, seedTriggers, setPool } from "./seed.ts";
import type { SlowTarget } from "./slow-target.ts";

export interface HttpTenant {
  prefix: string;
  maxInFlight: number;
  weight?: number;
  jobs: number;
}

/** Seeds the tenants (one each) with `jobs` triggers due now targeting `${target}/<tenant>/<delayMs>`,
 *  and the pool; returns the tenant ids in the order given. */
export async function seedHttpTenants(
  db: Db,
  target: SlowTarget,
  delayMs: number,
  concurrency: number,
  tenants: HttpTenant[],
): Promise<string[]> {
  await setPool(db, "work", concurrency);
  const ids: string[] = [];
  for (const t of tenants) {
    const [id] = await seedTenants(
      db,
      { prefix: t.prefix, count: 1, maxInFlight: t.maxInFlight, weight: t.weight },
      "work",
    );
    await db.execute(
      sql`UPDATE jobs SET target = jsonb_build_object('url', ${`${target.url}/${id}/${delayMs}`}::text) WHERE tenant_id = ${id}`,
    );
    await seedTriggers(db, [id], t.jobs, "work");
    ids.push(id);
  }
  return ids;
}

/** Executors wired like the server's default (one in-process coordinator shared by all of them, as
 *  several processes share one Redis); `stop()` stops them and closes the transports. Not started. */
export function httpExecutors(db: Db, count: number): { executors: Executor[]; stop(): Promise<void> } {
  const coordinator = createMemoryCoordinator();
  const transports = Array.from({ length: count }, () => createUndiciTransport({ allowPrivate: true }));
  const executors = transports.map(
    (transport) =>
      new Executor({ db, transport, allowPrivateTargets: true, wake: coordinator, readyIndex: coordinator }),
  );
  return {
    executors,
    async stop() {
      await Promise.all(executors.map((e) => e.stop(5_000)));
      await Promise.all(transports.map((t) => t.close()));
      await coordinator.close();
    },
  };
}

/** The largest distance, in jobs, between a tenant's starts and its weighted share of the first `n`
 *  starts, over every prefix: max over p ≤ n and tenants i of |starts_i(p) − p · w_i ÷ Σw|. */
export function maxPrefixLag(arrivals: string[], ids: string[], weights: number[], n: number): number {
  const wsum = weights.reduce((a, b) => a + b, 0);
  const count = new Map(ids.map((id) => [id, 0]));
  let worst = 0;
  for (let p = 1; p <= Math.min(n, arrivals.length); p++) {
    count.set(arrivals[p - 1], (count.get(arrivals[p - 1]) ?? 0) + 1);
    ids.forEach((id, i) => {
      worst = Math.max(worst, Math.abs(count.get(id)! - (p * weights[i]) / wsum));
    });
  }
  return worst;
}
