// The webhook target is down (503, Retry-After: 1) while a thousand triggers keep
// failing, so thousands of retries queue up. When it returns: every trigger is delivered, per-tenant
// caps hold throughout (seen from the receiver), Retry-After is honoured on every retry, and we report
// how the queued retries are spread in time (no single thundering instant).
import { expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { deliveryReport, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";

const PER_TENANT = 500;
const CAP = 5;
useDrill();

const attemptCount = () =>
  query<{ n: number }>(db.store.db, sql`SELECT count(*)::int AS n FROM attempts`).then((r) => r[0].n);

it("target down then back: all delivered, caps hold, Retry-After honoured, retries spread", {
  timeout: 60_000,
}, async () => {
  const ids: string[] = [];
  for (const t of ["a", "b"]) {
    await seedTenant(db.store.db, t, { maxInFlight: CAP });
    ids.push(
      ...(
        await seedDue(db.store.db, t, PER_TENANT, {
          target: { url: `${receiver.url}/t/${t}` },
          maxAttempts: 30,
          initialDelayMs: 200,
        })
      ).triggerIds,
    );
  }
  await seedPool(db.store.db, "work", 50, { leaseMs: 3000, timeoutMs: 2000 });
  receiver.mode = { kind: "down", retryAfterSec: 1 };
  receiver.delayMs = 5;

  const ex = startSurvivor({ reapEveryMs: 500 });
  try {
    // Down long enough for every trigger to fail at least twice: thousands of queued retries.
    await until(attemptCount, (n) => n >= 2 * ids.length, 40_000, "retries piling up");
    receiver.mode = { kind: "ok" };
    const upAt = Date.now();
    // Retry-After: 1 honoured by every queued retry: due no sooner than 1 s after its failed attempt ended.
    const [honour] = await query<{ min: number; n: number }>(
      db.store.db,
      sql`SELECT min(extract(epoch FROM t.next_attempt_at - a.started_at) * 1000 - a.duration_ms)::float8 AS min, count(*)::int AS n
            FROM triggers t JOIN attempts a ON a.trigger_id = t.id AND a.attempt = t.attempt_count
           WHERE t.status = 'pending' AND a.http_status = 503`,
    );
    const queued = await query<{ ms: number }>(
      db.store.db,
      sql`SELECT (extract(epoch FROM next_attempt_at) * 1000)::float8 AS ms FROM triggers WHERE status = 'pending' ORDER BY 1`,
    );
    await until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === ids.length,
      40_000,
      "all delivered after the target returned",
    );
    const drainedMs = Date.now() - upAt;

    const report = deliveryReport(receiver.hits, ids);
    const failures = receiver.hits.filter((h) => h.status === 503).length;
    // Spread: the queued retries' due times, and the recovery deliveries per 100 ms.
    const dueSpanMs = queued.length ? queued[queued.length - 1].ms - queued[0].ms : 0;
    const buckets = new Map<number, number>();
    for (const h of receiver.hits)
      if (h.at >= upAt && h.status === 200)
        buckets.set(Math.floor((h.at - upAt) / 100), (buckets.get(Math.floor((h.at - upAt) / 100)) ?? 0) + 1);
    const perBucket = [...buckets.values()];
    const maxOpen = Object.fromEntries(receiver.maxOpen);
    console.log(
      JSON.stringify({
        drill: "target-down",
        ...report,
        failedDeliveries: failures,
        queuedAtReturn: queued.length,
        dueSpanMs: Math.round(dueSpanMs),
        peakPer100ms: Math.max(...perBucket),
        meanPer100ms: Math.round(ids.length / Math.max(1, perBucket.length)),
        drainedMs,
        minRetryDelayAfter503Ms: Math.round(honour.min),
        retriesChecked: honour.n,
        maxOpen,
      }),
    );
    expect(report.lost).toBe(0);
    expect(report.foreign).toBe(0);
    expect(failures).toBeGreaterThanOrEqual(2 * ids.length);
    // Each tenant's cap held at the receiver, through failure and recovery.
    for (const t of ["a", "b"]) expect(receiver.maxOpen.get(t)).toBeLessThanOrEqual(CAP);
    // (Within the 1 ms rounding of the attempt row's duration.)
    expect(honour.n).toBeGreaterThan(ids.length / 2); // those pending (not running) at the snapshot
    expect(honour.min).toBeGreaterThanOrEqual(998);
    // Queued retries are not all due at one instant.
    expect(dueSpanMs).toBeGreaterThan(500);
  } finally {
    await ex.stop(2000);
  }
});
