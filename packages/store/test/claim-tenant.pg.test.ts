// The claim for one tenant (ClaimInput.tenantId, claim.ts), which a Citus cluster runs on the tenant's
// shard alone, on one PostgreSQL: it claims what the claim across tenants claims for that tenant as its
// one candidate — the same triggers in the same slots, the same ledger afterwards — except that it
// leaves the pool clock to its claimer and records the lease with its tenant.
import { expect, it } from "vitest";
import { oneTenant, claimReport, query, sql, type ClaimedTrigger, type ClaimInput } from "@fairway/store";
import { settleAndClaim } from "../src/sql/hand-off.ts";
import { standbyClaim } from "../src/sql/standby.ts";
import { useTestDb } from "../../../test/support/use-db.ts";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { seedDue, seedPool, seedTenant, succeeded } from "../../../test/support/seed.ts";

const pg = useTestDb();

/** The same tenant twice, in two pools: one claimed across tenants, the other for itself. */
async function twins(
  p: string,
  q: Parameters<typeof seedTenant>[2],
  seed: (tenantId: string, type: string) => Promise<void>,
) {
  for (const [id, type] of [
    [`${p}across`, `${p}a`],
    [`${p}alone`, `${p}b`],
  ]) {
    await seedPool(pg.db, type);
    await seedTenant(pg.db, id, q);
    await seed(id, type);
  }
}

const input = (type: string, budget: number): ClaimInput => ({ type, budget, owner: "exec_t", leaseMs: 60_000 });

/** What a claim gave, without ids and tokens. */
const shape = (claimed: ClaimedTrigger[]) =>
  claimed.map((c) => [c.priority, c.key, c.attempt, c.vt, c.vclock, c.atCap, c.jobName, c.secrets.length]);

const ledger = async (tenantId: string) => ({
  pools: await query(
    pg.db,
    sql`SELECT vtime, cost_ms, running FROM tenant_pools WHERE tenant_id = ${tenantId} ORDER BY type`,
  ),
  keys: await query(
    pg.db,
    sql`SELECT key, queued, running, vtime, vcorr FROM tenant_keys WHERE tenant_id = ${tenantId} ORDER BY key`,
  ),
  tokens: await query(pg.db, sql`SELECT rate_tokens FROM tenants WHERE id = ${tenantId}`),
});

async function compare(p: string, budget: number, rounds = 2) {
  for (let round = 0; round < rounds; round++) {
    const across = await claimReport(pg.db, { ...input(`${p}a`, budget), candidates: [`${p}across`] });
    const alone = await claimReport(pg.db, { ...input(`${p}b`, budget), tenantId: `${p}alone` });
    expect(alone.claimed.length).toBeGreaterThan(0);
    expect(shape(alone.claimed)).toEqual(shape(across.claimed));
    expect(alone.busy).toEqual(across.busy);
    const [a, b] = [await ledger(`${p}across`), await ledger(`${p}alone`)];
    // Rate tokens are refilled by the time between the two claims: equal to well within a token.
    expect(b.pools).toEqual(a.pools);
    expect(b.keys).toEqual(a.keys);
    expect(Number(b.tokens[0].rate_tokens ?? 0)).toBeCloseTo(Number(a.tokens[0].rate_tokens ?? 0), 1);
    const [lease] = await query<{ tenant_id: string | null; n: number }>(
      pg.db,
      sql`SELECT tenant_id, cardinality(trigger_ids)::int AS n FROM leases WHERE token = ${alone.claimed[0].leaseToken}`,
    );
    expect(lease).toEqual({ tenant_id: `${p}alone`, n: alone.claimed.length });
  }
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
}

it("claims for one tenant what the claim across tenants claims for it as its one candidate", async () => {
  await twins("w", { maxInFlight: 6, weight: 3 }, async (id, type) => {
    await seedDue(pg.db, id, 5, { type, priority: 1 });
    await seedDue(pg.db, id, 5, { type });
  });
  await compare("w", 4);
});

it("and for a keyed tenant with a rate quota", async () => {
  await twins("k", { maxInFlight: 20, ratePerSecond: 1000, burst: 5 }, async (id, type) => {
    await seedDue(pg.db, id, 4, { type, key: "k1" });
    await seedDue(pg.db, id, 4, { type, key: "k2" });
    await seedDue(pg.db, id, 2, { type });
  });
  await compare("k", 4);
});

it("gets nothing for a tenant at its cap, and writes no lease", async () => {
  await seedPool(pg.db, "pc");
  await seedTenant(pg.db, "capped", { maxInFlight: 2 });
  await seedDue(pg.db, "capped", 4, { type: "pc" });
  expect((await claimReport(pg.db, { ...input("pc", 10), tenantId: "capped" })).claimed).toHaveLength(2);
  expect(await claimReport(pg.db, { ...input("pc", 10), tenantId: "capped" })).toEqual({ claimed: [], busy: [] });
  const [{ n }] = await query<{ n: number }>(
    pg.db,
    sql`SELECT count(*)::int AS n FROM leases WHERE tenant_id = 'capped'`,
  );
  expect(n).toBe(1);
  // On standby, for itself: its next two, not counted.
  const held = await standbyClaim(pg.db, {
    type: "pc",
    owner: "exec_t",
    leaseMs: 60_000,
    want: [{ tenantId: "capped", n: 2 }],
    tenantId: "capped",
  });
  expect(held).toHaveLength(2);
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
});

it("hands off for one tenant in the settle's transaction", async () => {
  await seedPool(pg.db, "ph");
  await seedTenant(pg.db, "handed", { maxInFlight: 1 });
  await seedDue(pg.db, "handed", 3, { type: "ph" });
  const [first] = (await claimReport(pg.db, { ...input("ph", 10), tenantId: "handed" })).claimed;
  const r = await settleAndClaim(
    pg.db,
    [succeeded(first)],
    [{ ...input("ph", 1), candidates: ["handed"] }],
    [{ type: "ph", owner: "exec_t", leaseMs: 60_000, want: [{ tenantId: "handed", n: 1 }] }],
    oneTenant("handed"),
  );
  expect(r.settled.map((s) => s.id)).toEqual([first.id]);
  expect(r.claims[0]!.claimed).toHaveLength(1);
  expect(r.standby[0]).toHaveLength(1);
  const leases = await query<{ tenant_id: string | null }>(
    pg.db,
    sql`SELECT tenant_id FROM leases WHERE token IN (${r.claims[0]!.claimed[0].leaseToken}, ${r.standby[0]![0].leaseToken})`,
  );
  expect(leases).toEqual([{ tenant_id: "handed" }, { tenant_id: "handed" }]);
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
});
