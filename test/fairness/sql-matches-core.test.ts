// The SQL claimer and core's allocate() implement one rule (start-time weighted fair queuing). For
// random tenants (weights, virtual times, caps, backlogs) a single real claim must hand each tenant
// exactly what allocate() says. On the per-tenant layout the split is the executor's (TenantShares,
// from what claims return) and each tenant's claim is a statement of its own: given allocate()'s share
// as its budget, each must claim exactly that share.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { allocate } from "../../packages/core/src/fairshare.ts";
import { claim, claimReport, LAYOUT_NAMES, sql } from "@fairway/store";
import { dueScanCap } from "../../packages/store/src/sql/claim.ts";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { seedDue, seedTenant } from "../support/seed.ts";

describe.each(LAYOUT_NAMES)("SQL claim allocation = core allocate(), %s layout", (layout) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb({ layout });
  });
  afterAll(async () => t?.drop());

  it("agrees on random tenant sets", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            weight: fc.integer({ min: 1, max: 8 }),
            vtime: fc.integer({ min: 0, max: 2000 }),
            costMs: fc.integer({ min: 1, max: 500 }),
            cap: fc.integer({ min: 1, max: 12 }),
            due: fc.integer({ min: 0, max: 15 }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        fc.integer({ min: 1, max: 40 }),
        async (tenants, budget) => {
          const type = `p${run++}`;
          const db = t.store.db;
          const fair = [];
          for (const [i, x] of tenants.entries()) {
            // Ids sort the same in any collation, so tie-breaks agree.
            const id = `${type}-t${String(i).padStart(2, "0")}`;
            await seedTenant(db, id, { maxInFlight: x.cap, weight: x.weight });
            if (x.due > 0) await seedDue(db, id, x.due, { type });
            await db.execute(
              sql`INSERT INTO tenant_pools (tenant_id, type, vtime, cost_ms) VALUES (${id}, ${type}, ${x.vtime}, ${x.costMs})`,
            );
            fair.push({ id, weight: x.weight, vtime: x.vtime, costMs: x.costMs, room: Math.min(x.cap, x.due) });
          }
          await db.execute(sql`INSERT INTO pools (type) VALUES (${type}) ON CONFLICT DO NOTHING`);
          // The claim looks at a bounded part of each backlog: model the same bound (twice each
          // candidate's share by weight ÷ cost; candidates are the tenants with due work).
          const candidates = fair.filter((f) => f.room > 0);
          const sum = candidates.reduce((a, f) => a + f.weight / f.costMs, 0);
          for (const f of candidates) f.room = Math.min(f.room, dueScanCap(budget, f.weight / f.costMs / sum));
          const byCore = allocate(budget, fair);
          const input = { type, budget, owner: "prop", leaseMs: 60_000 };
          const got =
            layout === "single"
              ? await claim(db, input)
              : (
                  await Promise.all(
                    [...byCore]
                      .filter(([, n]) => n > 0)
                      .map(([tenantId, n]) => claimReport(db, { ...input, budget: n, tenantId })),
                  )
                ).flatMap((r) => r.claimed);
          const bySql = new Map<string, number>();
          for (const g of got) bySql.set(g.tenantId, (bySql.get(g.tenantId) ?? 0) + 1);
          for (const f of fair) expect([f.id, bySql.get(f.id) ?? 0]).toEqual([f.id, byCore.get(f.id) ?? 0]);
        },
      ),
      // Fewer runs of the per-tenant layout: its statements are also checked one by one in the store suite.
      { numRuns: layout === "single" ? 40 : 20, seed: 20261121 },
    );
  }, 60_000);
});
