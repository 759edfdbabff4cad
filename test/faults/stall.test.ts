// Stall an executor (SIGSTOP) past its lease, let another executor complete its
// triggers, then resume it (SIGCONT). Everything the stalled one writes afterwards — renewals and
// settles — is fenced by its stale lease tokens and changes 0 rows; no attempt is counted twice.
import { expect, it } from "vitest";
import { ALL_TENANTS, query, releaseLeases, renewLeases, settle, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "./support/children.ts";
import { attemptAnomalies, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";

const N = 20;
useDrill();

const snapshot = () =>
  query(
    db.store.db,
    sql`SELECT t.id, t.status, t.attempt_count, t.updated_at::text, t.lease_token,
               (SELECT json_agg(json_build_object('a', a.attempt, 'o', a.outcome) ORDER BY a.attempt) FROM attempts a WHERE a.trigger_id = t.id) AS attempts
          FROM triggers t ORDER BY t.id`,
  );

it("a stalled executor resumes after losing its leases: its renew/settle writes change 0 rows", async () => {
  await seedTenant(db.store.db, "a", { maxInFlight: 100 });
  await seedPool(db.store.db, "work", N, { leaseMs: 1500, timeoutMs: 1400 });
  const { jobId } = await seedDue(db.store.db, "a", N, { target: { url: `${receiver.url}/t/a` }, maxAttempts: 5 });
  // A long job timeout: the stalled runs are still in flight when it resumes, so it tries to renew.
  await db.store.db.execute(sql`UPDATE jobs SET timeout_ms = 20000 WHERE id = ${jobId}`);

  receiver.mode = { kind: "hold" };
  const victim = await startExecutorChild({ DATABASE_URL: db.url, OWNER: "victim" });
  await receiver.waitFor(() => receiver.held === N, 20_000, "victim holding its claims");
  const stale = await query<{ id: string; leaseToken: string }>(
    db.store.db,
    sql`SELECT id, lease_token AS "leaseToken" FROM triggers WHERE lease_owner = 'victim'`,
  );
  expect(stale).toHaveLength(N);
  victim.signal("SIGSTOP");
  receiver.mode = { kind: "ok" };

  // Another executor reaps the expired leases and completes the work.
  const other = startSurvivor({ reapEveryMs: 100 });
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === N,
      20_000,
      "other executor completed the work",
    );
  } finally {
    await other.stop(1000);
  }
  const before = await snapshot();

  // Resume: the victim's renewals find every lease lost…
  victim.signal("SIGCONT");
  await until(
    () => victim.events.filter((e) => e.msg === "lease lost").length,
    (n) => n >= N,
    10_000,
    "victim renewal ran",
  );
  // …then its held deliveries are answered 200 and it settles them, fenced by stale tokens.
  receiver.release();
  const stats = await victim.stop();
  console.log(
    JSON.stringify({
      drill: "stall",
      victim: stats,
      leaseLostWarnings: victim.events.filter((e) => e.msg === "lease lost").length,
    }),
  );
  expect(stats).toMatchObject({ claimed: N, settled: 0, released: 0 });
  expect(await snapshot()).toEqual(before);

  // The same stale tokens written directly: every fenced statement changes 0 rows.
  expect((await renewLeases(db.store.db, stale, 60_000, ALL_TENANTS)).size).toBe(0);
  expect(await releaseLeases(db.store.db, stale, ALL_TENANTS)).toBe(0);
  const late = stale.map((s) => ({
    ...s,
    attempt: 1,
    status: "succeeded" as const,
    startedAt: new Date(),
    durationMs: 1,
    outcome: "success",
  }));
  expect(await settle(db.store.db, late)).toEqual([]);
  expect(await snapshot()).toEqual(before);

  for (const row of before as Array<{ attempts: Array<{ a: number; o: string }> }>) {
    expect(row.attempts).toEqual([
      { a: 1, o: "lease_expired" },
      { a: 2, o: "success" },
    ]);
  }
  expect(await attemptAnomalies(db.store.db)).toEqual([]);
});
