// Direct seeding for store and executor tests: tenants, jobs and due triggers without the API.
import { generateSigningSecret, newId } from "@fairway/core";
import { putPool, sql, type Db, type Settlement, DEFAULT_POOL } from "@fairway/store";

export async function seedTenant(
  db: Db,
  id: string,
  q: { maxInFlight?: number; weight?: number; ratePerSecond?: number | null; burst?: number | null } = {},
) {
  await db.execute(sql`
    INSERT INTO tenants (id, name, max_in_flight, weight, rate_per_second, burst, signing_secret)
    VALUES (${id}, ${id}, ${q.maxInFlight ?? 10}, ${q.weight ?? 1}, ${q.ratePerSecond ?? null}, ${q.burst ?? null}, ${generateSigningSecret()})`);
}

export async function seedPool(db: Db, type: string, concurrency = 50, extra: Partial<typeof DEFAULT_POOL> = {}) {
  await putPool(db, { ...DEFAULT_POOL, ...extra, type, concurrency });
}

/** A one-time-style job with `count` triggers due at `at` (default: now). Returns trigger ids. */
export async function seedDue(
  db: Db,
  tenantId: string,
  count: number,
  opts: {
    type?: string;
    at?: Date;
    maxAttempts?: number;
    target?: unknown;
    priority?: number;
    initialDelayMs?: number;
    delivery?: "at_least_once" | "at_most_once";
    /** The job's fairness key, carried by its triggers. */
    key?: string | null;
  } = {},
): Promise<{ jobId: string; triggerIds: string[] }> {
  const type = opts.type ?? "work";
  const jobId = newId("job");
  await db.execute(sql`
    INSERT INTO jobs (id, tenant_id, name, type, run_at, target, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at, delivery, key)
    VALUES (${jobId}, ${tenantId}, ${"seeded"}, ${type}, now(), ${opts.target ? JSON.stringify(opts.target) : null}::jsonb,
            ${opts.maxAttempts ?? 3}, ${opts.initialDelayMs ?? 10}, 1000, now(), ${opts.delivery ?? "at_least_once"}, ${opts.key ?? null})`);
  await db.execute(sql`INSERT INTO pools (type) VALUES (${type}) ON CONFLICT DO NOTHING`);
  const at = (opts.at ?? new Date(Date.now() - 1000)).toISOString();
  const ids = Array.from({ length: count }, () => newId("trg"));
  for (let i = 0; i < ids.length; i += 5000) {
    const chunk = ids.slice(i, i + 5000);
    await db.execute(sql`
      INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts, priority, key)
      SELECT x.id, ${tenantId}, ${jobId}, ${type}, 'manual', ${at}::timestamptz, ${at}::timestamptz, ${opts.maxAttempts ?? 3}, ${opts.priority ?? 0}, ${opts.key ?? null}
        FROM jsonb_array_elements_text(${JSON.stringify(chunk)}::jsonb) AS x(id)`);
  }
  return { jobId, triggerIds: ids };
}

/** A claimed trigger's successful settlement, as a worker reports it; `extra` overrides any field. */
export function succeeded(
  c: { id: string; leaseToken: string; attempt: number },
  extra: Partial<Settlement> = {},
): Settlement {
  return {
    id: c.id,
    leaseToken: c.leaseToken,
    attempt: c.attempt,
    status: "succeeded",
    startedAt: new Date(),
    durationMs: 5,
    outcome: "success",
    ...extra,
  };
}
