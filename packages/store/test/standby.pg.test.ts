// Standby triggers (standby.ts) and the running count (tenant_pools.running, what caps check): a
// standby claim counts nothing; a settle that names a standby successor moves it into the count as it
// takes the finished run out; a successor whose lease was lost, or that is settled in the same batch,
// is never counted; the reaper and release uncount only what was counted. The same per fairness key
// (tenant_keys.running) for a key at its own cap. After each step the counts equal the running
// triggers not on standby (queueDrift).
import { describe, expect, it } from "vitest";
import {
  LAYOUT_NAMES,
  layoutNamed,
  type StandbyInput,
  ALL_TENANTS,
  claim,
  putKeyOverride,
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

  const keyRunning = async (tenantId: string, key: string) =>
    (
      await query<{ n: number }>(
        pg.db,
        sql`SELECT coalesce(sum(running), 0)::int AS n FROM tenant_keys WHERE tenant_id = ${tenantId} AND key = ${key}`,
      )
    )[0].n;

  const KCAP = 4;
  /** Tenant `tenantId` (no cap of its own in reach) with key x capped at KCAP, 8 due of x and 3 of y
   *  (no cap), y's older: a claim takes x to its cap and all of y. */
  async function keyAtCap(tenantId: string, type: string) {
    await seedTenant(pg.db, tenantId, { maxInFlight: 20 });
    await seedPool(pg.db, type, 20);
    await putKeyOverride(pg.db, tenantId, "x", { maxInFlight: KCAP });
    await putKeyOverride(pg.db, tenantId, "z", { maxInFlight: 1, ratePerSecond: 50 });
    await seedDue(pg.db, tenantId, 3, { type, key: "y" });
    await seedDue(pg.db, tenantId, 8, { type, key: "x" });
    await seedDue(pg.db, tenantId, 2, { type, key: "z" });
    const runs = await claim(pg.db, { type, budget: 20, owner: "x", leaseMs: 60_000 });
    const of = (key: string) => runs.filter((r) => r.key === key);
    expect(of("x")).toHaveLength(KCAP);
    expect(of("y")).toHaveLength(3);
    expect(of("z")).toHaveLength(1);
    return of;
  }

  it("a key at its cap holds its next triggers on standby; the hand-over counts one in its key per finished run", async () => {
    const of = await keyAtCap("sk_a", "sk_a");
    const want = (key: string | null, n: number) => ({
      type: "sk_a",
      owner: "x",
      leaseMs: 60_000,
      want: [{ tenantId: "sk_a", n, key }],
    });
    // The tenant, below its own cap with keyed work queued, holds nothing of its own; a key below its
    // cap, or with a rate quota, holds nothing either.
    expect(await standbyAs(want(null, 5))).toHaveLength(0);
    expect(await standbyAs(want("y", 5))).toHaveLength(0);
    expect(await standbyAs(want("z", 5))).toHaveLength(0);
    // x at its cap: at most its cap on standby, whatever is asked, all of x, counted nowhere.
    const standby = await standbyAs(want("x", 5));
    expect(standby).toHaveLength(KCAP);
    expect(standby.every((t) => t.key === "x")).toBe(true);
    expect(await keyRunning("sk_a", "x")).toBe(KCAP);
    expect(await running("sk_a")).toBe(KCAP + 4);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
    // No claim takes any of x: the key is at its cap, standby or not.
    expect(await claim(pg.db, { type: "sk_a", budget: 20, owner: "y", leaseMs: 60_000 })).toHaveLength(0);
    // The hand-over: x's count stays at its cap (one out, one in), and so does the tenant's.
    const [x0, x1] = of("x");
    await settle(pg.db, [done(x0, standby[0])]);
    expect(await keyRunning("sk_a", "x")).toBe(KCAP);
    expect(await running("sk_a")).toBe(KCAP + 4);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
    // A successor settled in the batch that names it was never counted; one whose lease was lost is
    // not moved in.
    await settle(pg.db, [done(x1, standby[1]), done(standby[1])]);
    expect(await keyRunning("sk_a", "x")).toBe(KCAP - 1);
    await pg.db.execute(
      sql`UPDATE triggers SET lease_expires_at = now() - interval '1 second' WHERE id = ${standby[2].id}`,
    );
    await settle(pg.db, [{ ...done(standby[2]), status: "pending", reap: true, outcome: "lease_expired" }]);
    await settle(pg.db, [done(of("x")[2], standby[2])]);
    expect(await keyRunning("sk_a", "x")).toBe(KCAP - 2);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
    // Released standby triggers go back to the queue without uncounting x's runs.
    expect(await releaseLeases(pg.db, standby.slice(3), ALL_TENANTS)).toBe(KCAP - 3);
    expect(await keyRunning("sk_a", "x")).toBe(KCAP - 2);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
    // What is left settles to nothing counted.
    await settle(pg.db, [
      done(standby[0]),
      ...of("x")
        .slice(3)
        .map((t) => done(t)),
      ...of("y").map((t) => done(t)),
      ...of("z").map((t) => done(t)),
    ]);
    expect(await keyRunning("sk_a", "x")).toBe(0);
    expect(await running("sk_a")).toBe(0);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });

  it("a key's standby takes no trigger of a job with an onBusy policy: it waits for its decision", async () => {
    await keyAtCap("sk_c", "sk_c");
    // x's queued triggers: 4 of a plain job (seeded above), then 2 older of a job that skips when busy.
    const { triggerIds: skipping } = await seedDue(pg.db, "sk_c", 2, { type: "sk_c", key: "x", priority: 5 });
    await pg.db.execute(
      sql`UPDATE jobs SET on_busy = 'skip' WHERE id = (SELECT job_id FROM triggers WHERE id = ${skipping[0]})`,
    );
    const standby = await standbyAs({
      type: "sk_c",
      owner: "x",
      leaseMs: 60_000,
      want: [{ tenantId: "sk_c", n: KCAP, key: "x" }],
    });
    expect(standby).toHaveLength(KCAP);
    expect(standby.filter((t) => skipping.includes(t.id))).toEqual([]);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });

  it("a tenant's own standby claim takes no keyed trigger", async () => {
    // At its cap with nothing keyed queued: its standby is its own. A keyed trigger queued since is
    // left in the queue (it would be counted in no key).
    await atCap("sk_b", "sk_b", 4);
    await seedDue(pg.db, "sk_b", 3, { type: "sk_b", key: "k", priority: 5 });
    await pg.db.execute(sql`UPDATE tenant_keys SET queued = 0 WHERE tenant_id = 'sk_b'`);
    const standby = await standbyAs({
      type: "sk_b",
      owner: "x",
      leaseMs: 60_000,
      want: [{ tenantId: "sk_b", n: CAP }],
    });
    await pg.db.execute(sql`UPDATE tenant_keys SET queued = 3 WHERE tenant_id = 'sk_b'`);
    expect(standby).toHaveLength(CAP);
    expect(standby.every((t) => t.key === null)).toBe(true);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });

  it("two claimers racing claims, standby claims and hand-overs never count a key past its cap, and lose nothing", async () => {
    const [T, type] = ["sk_r", "sk_r"];
    await seedTenant(pg.db, T, { maxInFlight: 50 });
    await seedPool(pg.db, type, 50);
    await putKeyOverride(pg.db, T, "x", { maxInFlight: KCAP });
    const { triggerIds } = await seedDue(pg.db, T, 40, { type, key: "x" });
    let most = 0;
    const sample = async () => void (most = Math.max(most, await keyRunning(T, "x")));
    const left = async () =>
      (
        await query<{ n: number }>(
          pg.db,
          sql`SELECT count(*)::int AS n FROM triggers WHERE tenant_id = ${T} AND status <> 'succeeded'`,
        )
      )[0].n;
    // One executor's part: claim, hold one standby trigger per counted run, and end its runs one by
    // one, each handing its slot to the next standby trigger (as standby-slots.ts does).
    const worker = async (owner: string) => {
      const running: ClaimedTrigger[] = [];
      let standby: ClaimedTrigger[] = [];
      for (let round = 0; round < 400; round++) {
        running.push(...(await claim(pg.db, { type, budget: 5, owner, leaseMs: 60_000 })));
        const n = running.length - standby.length;
        if (n > 0)
          standby.push(...(await standbyAs({ type, owner, leaseMs: 60_000, want: [{ tenantId: T, n, key: "x" }] })));
        await sample();
        const finished = running.shift();
        if (!finished) {
          // No run here to take over from: the standby triggers go back.
          if (standby.length > 0) await releaseLeases(pg.db, standby, ALL_TENANTS);
          standby = [];
          if ((await left()) === 0) return;
          continue;
        }
        const next = standby.shift();
        await settle(pg.db, [done(finished, next)]);
        if (next) running.push(next);
        await sample();
      }
    };
    await Promise.all([worker("a"), worker("b")]);
    expect(most).toBe(KCAP);
    expect(await left()).toBe(0);
    const [{ n }] = await query<{ n: number }>(
      pg.db,
      sql`SELECT count(*)::int AS n FROM triggers WHERE id = ANY (${`{${triggerIds.join(",")}}`}::text[]) AND status = 'succeeded'`,
    );
    expect(n).toBe(triggerIds.length);
    expect(await keyRunning(T, "x")).toBe(0);
    expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  });
});
