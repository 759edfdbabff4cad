// pg-boss 10.4.2 with batch fetching (`batchSize` 1000) as its docs recommend for throughput; the
// handler receives the batch and pg-boss completes it in one statement.
import PgBoss from "pg-boss";

export const PGBOSS_CONFIG = { batchSize: 1000, pollingIntervalSeconds: 0.5 } as const;

export async function pgbossStart(url: string, queue: string): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url, schema: "pgboss", supervise: false, schedule: false });
  boss.on("error", (err) => console.error("[pg-boss]", err));
  await boss.start();
  await boss.createQueue(queue);
  return boss;
}

export async function pgbossEnqueue(boss: PgBoss, queue: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 5000) {
    await boss.insert(Array.from({ length: Math.min(5000, n - i) }, (_, k) => ({ name: queue, data: { i: i + k } })));
  }
}
