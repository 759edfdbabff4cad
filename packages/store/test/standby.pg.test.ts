// Standby triggers (standby.ts) and the running count (tenant_pools.running, what caps check): a
// standby claim counts nothing; a settle that names a standby successor moves it into the count as it
// takes the finished run out; a successor whose lease was lost, or that is settled in the same batch,
// is never counted; the reaper and release uncount only what was counted. After each step the count
// equals the running triggers not on standby (queueDrift).
import { describe, expect, it } from "vitest";
import {
  LAYOUT_NAMES,
  layoutNamed,
  type StandbyInput,
  ALL_TENANTS,
  claim,
  query,
  releaseLeases,
  settle,
  sql,
  standbyClaim,
  type ClaimedTrigger,
} from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { seedDue, seedPool, seedTenant } from "../../../test/support/seed.ts";

// Both layouts, on plain PostgreSQL (store.pg.test.ts).
describe.each(LAYOUT_NAMES)("%s layout", (layout) => {
  const pg = useTestDb({ layout });
  /** A standby claim as the layout sends it (one, or one per tenant). */
  const standbyAs = async (input: StandbyInput) =>
    (
      await Promise.all(
        layoutNamed(layout)
          .standby(input)
          .map((i) => standbyClaim(pg.db, i)),
      )
    ).flat();
  const CAP = 2;

  const running = async (tenantId: string) =>
    (
      await query<{ n: number }>(
        pg.db,
        sql`SELECT coalesce(sum(running), 0)::int AS n FROM tenant_pools WHERE tenant_id = ${tenantId}`,
      )
    )[0].n;

  const done = (t: ClaimedTrigger, successor?: ClaimedTrigger) => ({
    id: t.id,
    leaseToken: t.leaseToken,
    attempt: t.attempt,
    status: "succeeded" as const,
    startedAt: new Date(),
    durationMs: 5,
    outcome: "success",
    successor: successor ? { id: successor.id, leaseToken: successor.leaseToken, attempt: successor.attempt } : null,
  });

  async function atCap(tenantId: string, type: string, due: number) {
    await seedTenant(pg.db, tenantId, { maxInFlight: CAP });
    await seedPool(pg.db, type, 10);
    await seedDue(pg.db, tenantId, due, { type });
    const runs = await claim(pg.db, { type, budget: 10, owner: "x", leaseMs: 60_000 });
    expect(runs).toHaveLength(CAP);
    return runs;
  }

  it("a standby claim counts nothing, and a hand-over moves one trigger into the count per finished run", async () => {
    const runs = await atCap("sb_a", "sb_a", 8);
    // At its cap: at most its cap on standby, whatever is asked.
    const standby = await standbyAs({
      type: "sb_a",
      owner: "x",
      leaseMs: 60_000,
      want: [{ tenantId: "sb_a", n: 5 }],
    });
    expect(standby).toHaveLength(CAP);
    expect(standby.every((t) => t.atCap)).toBe(true);
    expect(await running("sb_a")).toBe(CAP);
    // No claim takes anything: the tenant is at its cap, standby or not.
    expect(await claim(pg.db, { type: "sb_a", budget: 10, owner: "y", leaseMs: 60_000 })).toHaveLength(0);
    await settle(pg.db, [done(runs[0], standby[0])]);
    expect(await running("sb_a")).toBe(CAP);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
    // The settled standby trigger stops counting; one never handed over was never counted.
    await settle(pg.db, [done(runs[1]), done(standby[0]), done(standby[1])]);
    expect(await running("sb_a")).toBe(0);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });

  it("a successor settled in the same batch, or whose lease was lost, is never counted", async () => {
    const runs = await atCap("sb_b", "sb_b", 8);
    const standby = await standbyAs({
      type: "sb_b",
      owner: "x",
      leaseMs: 60_000,
      want: [{ tenantId: "sb_b", n: CAP }],
    });
    // The successor ran and ended before the hand-over was written: both in one statement.
    await settle(pg.db, [done(runs[0], standby[0]), done(standby[0])]);
    expect(await running("sb_b")).toBe(CAP - 1);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
    // The other standby trigger lost its lease (reaped back to pending): the hand-over changes nothing.
    await pg.db.execute(
      sql`UPDATE triggers SET lease_expires_at = now() - interval '1 second' WHERE id = ${standby[1].id}`,
    );
    await settle(pg.db, [{ ...done(standby[1]), status: "pending", reap: true, outcome: "lease_expired" }]);
    expect(await running("sb_b")).toBe(CAP - 1);
    await settle(pg.db, [done(runs[1], standby[1])]);
    expect(await running("sb_b")).toBe(0);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
    // The reaped one is pending again, and the claims count what they take as before.
    const [{ status }] = await query<{ status: string }>(
      pg.db,
      sql`SELECT status FROM triggers WHERE id = ${standby[1].id}`,
    );
    expect(status).toBe("pending");
    const again = await claim(pg.db, { type: "sb_b", budget: 10, owner: "y", leaseMs: 60_000 });
    expect(again).toHaveLength(CAP);
    expect(await running("sb_b")).toBe(CAP);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });

  it("releasing standby triggers gives them back without uncounting the runs", async () => {
    await atCap("sb_c", "sb_c", 8);
    const standby = await standbyAs({
      type: "sb_c",
      owner: "x",
      leaseMs: 60_000,
      want: [{ tenantId: "sb_c", n: CAP }],
    });
    expect(await releaseLeases(pg.db, standby, ALL_TENANTS)).toBe(CAP);
    expect(await running("sb_c")).toBe(CAP);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });
});
