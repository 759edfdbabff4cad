// `kill -9` an executor whose pool leases are ten minutes long: its heartbeat stops, a live executor
// marks it lost after the heartbeat timeout and cuts its leases, and its triggers are re-run then —
// long before the leases could have expired (the test's own timeout is a fraction of the lease).
// Still fenced: lost 0, duplicates only of what was in flight, every attempt on record.
import { expect, it } from "vitest";
import { createApp } from "@fairway/api";
import { createMemoryCoordinator } from "@fairway/coord";
import { query, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "./support/children.ts";
import { attemptAnomalies, deliveryReport, leasesHeld, statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";

const TOTAL = 120;
const IN_FLIGHT = 40;
const LEASE_MS = 600_000;
const HEARTBEAT = { HEARTBEAT_MS: "200", HEARTBEAT_TIMEOUT_MS: "1500" };

useDrill();

it("kill -9: leases are reaped after the heartbeat timeout, not the lease; lost 0", async () => {
  await seedTenant(db.store.db, "a", { maxInFlight: 1000 });
  await seedPool(db.store.db, "work", IN_FLIGHT, { leaseMs: LEASE_MS, timeoutMs: 30_000 });
  const { triggerIds } = await seedDue(db.store.db, "a", TOTAL, {
    target: { url: `${receiver.url}/t/a` },
    maxAttempts: 5,
  });
  const app = createApp({
    db: db.store.db,
    coordinator: createMemoryCoordinator(),
    adminToken: "admin-token-heartbeat-drill",
    allowPrivateTargets: true,
  });
  const executors = async () =>
    (
      (await (
        await app.request("/v1/admin/executors", { headers: { authorization: "Bearer admin-token-heartbeat-drill" } })
      ).json()) as any
    ).data as any[];

  receiver.mode = { kind: "hold" };
  const victim = await startExecutorChild({ DATABASE_URL: db.url, OWNER: "victim", ...HEARTBEAT });
  await receiver.waitFor(() => receiver.held === IN_FLIGHT, 20_000, "victim holding a full pool");
  const held = new Set(receiver.hits.map((h) => h.id));
  // Registered and live, with its pool's load.
  const before = await until(
    async () => (await executors()).find((e) => e.id === "victim"),
    (e) => e?.pools.length > 0,
    5000,
    "victim's heartbeat",
  );
  expect(before).toMatchObject({ status: "live", pools: [{ type: "work", concurrency: IN_FLIGHT }] });
  expect(before.pid).toBe(victim.child.pid);

  victim.signal("SIGKILL");
  expect(await victim.exited).toBe(null);
  const leased = await leasesHeld(db.store.db, "victim");
  expect(leased).toBeGreaterThanOrEqual(IN_FLIGHT);
  const [{ leaseEnds }] = await query<{ leaseEnds: Date }>(
    db.store.db,
    sql`SELECT min(lease_expires_at) AS "leaseEnds" FROM triggers WHERE lease_owner = 'victim'`,
  );

  receiver.mode = { kind: "ok" };
  const survivor = startSurvivor({ heartbeat: { everyMs: 200, timeoutMs: 1500 } });
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => c.succeeded === TOTAL,
      30_000,
      "all triggers succeeded",
    );
    // Everything finished while the victim's leases still had most of their ten minutes to run.
    const [{ early }] = await query<{ early: boolean }>(
      db.store.db,
      sql`SELECT now() < ${new Date(leaseEnds).toISOString()}::timestamptz - interval '5 minutes' AS early`,
    );
    expect(early).toBe(true);

    const report = deliveryReport(receiver.hits, triggerIds);
    console.log(
      JSON.stringify({ drill: "kill9-heartbeat", ...report, inFlightAtKill: held.size, reaped: survivor.stats.reaped }),
    );
    expect(report.lost).toBe(0);
    expect(report.foreign).toBe(0);
    expect(report.duplicates).toBeLessThanOrEqual(IN_FLIGHT);
    expect(survivor.stats.reaped).toBe(leased);
    // Each of the victim's runs was reaped (a lease_expired attempt on record) after the victim was
    // marked lost, never before: the heartbeat timeout, not the ten-minute lease, let them go.
    const [order] = await query<{ reapedRuns: number; beforeLost: number }>(
      db.store.db,
      sql`SELECT count(*)::int AS "reapedRuns",
                 count(*) FILTER (WHERE a.created_at < e.lost_at)::int AS "beforeLost"
            FROM attempt_log a, executors e
           WHERE e.id = 'victim' AND a.outcome = 'lease_expired' AND a.error LIKE '%victim%'`,
    );
    expect(order).toEqual({ reapedRuns: leased, beforeLost: 0 });
    expect(await attemptAnomalies(db.store.db)).toEqual([]);

    const list = await executors();
    expect(list.find((e) => e.id === "victim")).toMatchObject({ status: "lost" });
    expect(list.find((e) => e.id === survivor.owner)).toMatchObject({ status: "live" });
  } finally {
    await survivor.stop(2000);
  }
  expect((await executors()).find((e) => e.id === survivor.owner)).toMatchObject({ status: "stopped" });
});
