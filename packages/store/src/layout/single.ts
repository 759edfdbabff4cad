// The single-node layout: one PostgreSQL (or the embedded one). A claim covers every candidate tenant
// in one statement that splits the budget by weighted fair share and moves the pool clock itself; a
// batch of settles, releases or renewals is one transaction for every tenant.
import type { Db } from "../db.ts";
import { claimReport, settleIn } from "../sql/delegated.ts";
import { insertJobs } from "../sql/create-job.ts";
import { expireLostAcross } from "../sql/executors.ts";
import { materialize } from "../sql/materialize.ts";
import { decideBusy } from "../sql/on-busy.ts";
import { pendingOfTenants } from "../sql/ready-index.ts";
import { dropSpent, findExpired } from "../sql/reap.ts";
import { authenticateJoined } from "../sql/tenants.ts";
import { fanOutOnce } from "./fan-out.ts";
import type { Layout } from "./layout.ts";
import { ALL_TENANTS } from "./scope.ts";

export const single: Layout = {
  name: "single",
  fanOut: (items, _tenantOf, write) => fanOutOnce(items, write),
  async eachScope(_db, visit, _stopping, onError) {
    await visit(ALL_TENANTS).catch((err: unknown) => onError(err, ALL_TENANTS));
  },
  readFailed(err) {
    throw err;
  },
  async claimPool(_db, r) {
    const { claimed, busy } = await r.send({
      type: r.type,
      budget: r.budget,
      owner: r.owner,
      leaseMs: r.leaseMs,
      candidates: r.candidates?.map((c) => c.tenantId),
    });
    return { claimed, busy, asked: r.candidates, budget: r.budget, failed: new Map() };
  },
  claim: (db, input) => claimReport(db, input),
  handedOff() {},
  standby: (input) => [input],
  settle: (db, items) => settleIn(db, items, ALL_TENANTS),
  async materialize(db, at, lookaheadMs, batch) {
    const m = await materialize(db, at, lookaheadMs, batch);
    // onBusy skip / replace_queued: due triggers of keys at their cap (sql/on-busy.ts).
    await decideBusy(db, at);
    return { m, found: m.jobs };
  },
  pendingByTenant: (db, type, tenantIds) => pendingOfTenants(db, type, tenantIds, false),
  findExpiredLeases: (db, limit) => findExpired(db, limit, false),
  dropSpentLeases: (db, limit) => dropSpent(db, limit, false),
  expireLostExecutors: (db, recentMs) => expireLostAcross(db, recentMs),
  authenticateKey: (db, hash) => authenticateJoined(db, hash),
  createJobs: (db: Db, batch) => insertJobs(db, batch, false),
  shape: (shapes) => shapes.single,
  nodes: async () => null,
};
