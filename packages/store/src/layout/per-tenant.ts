// The per-tenant layout: a Citus cluster with Fairway's tables distributed by tenant (docs/scaling.md).
// Every hot statement, or transaction, is for one tenant and runs on its node alone; no transaction
// spans nodes (a two-phase commit, and one node down would fail every tenant's write with it). A pool's
// claim is a claim per tenant, for the share of the budget the executor's TenantShares gives it; reads
// across tenants (the due tenants, the reaper's leases, the due cron jobs) read every shard once per
// pass. One node down fails only its tenants' work: each is set aside and the others go on.
//
// Its statements are plain SQL: forced at connect (connectPostgres `layout: "per-tenant"`), plain
// PostgreSQL runs them too, which is how the conformance suite runs both layouts in every CI run.
import type { Db } from "../db.ts";
import type { ClaimedTrigger, ClaimReport } from "../sql/claim.ts";
import { dueTenants } from "../sql/claim.ts";
import { claimReport, settleIn } from "../sql/delegated.ts";
import { clusterNodes } from "../sql/cluster-reads.ts";
import { insertJobs } from "../sql/create-job.ts";
import { expireLostOnCluster } from "../sql/executors.ts";
import { dueCronTenants, materialize, type MaterializeResult } from "../sql/materialize.ts";
import { busyPolicyTenants, decideBusy } from "../sql/on-busy.ts";
import { pendingOfTenants } from "../sql/ready-index.ts";
import { dropSpent, findExpired } from "../sql/reap.ts";
import { authenticateThenTenant, listTenants } from "../sql/tenants.ts";
import { fanOutPerTenant, TENANTS_AT_ONCE } from "./fan-out.ts";
import type { Layout, PoolClaim } from "./layout.ts";
import { oneTenant } from "./scope.ts";

/** Tenants listed per read by a pass over every tenant (retention). */
const TENANT_PAGE = 500;

/** The per-tenant layout; `cluster`: on a Citus coordinator (its nodes can be listed). */
export function perTenant(cluster: boolean): Layout {
  return {
    name: "per-tenant",
    fanOut: fanOutPerTenant,
    async eachScope(db, visit, stopping, onError) {
      for (let after: string | null = null; !stopping(); ) {
        const page = await listTenants(db, after, TENANT_PAGE);
        for (const t of page) {
          if (stopping()) break;
          const scope = oneTenant(t.id);
          // A tenant whose statements fail (its node down) waits for the next pass; the others go on.
          await visit(scope).catch((err: unknown) => onError(err, scope));
        }
        if (page.length < TENANT_PAGE) break;
        after = page[page.length - 1]!.id;
      }
    },
    readFailed() {},
    async claimPool(db, r, shares): Promise<PoolClaim | null> {
      // Without a ready index (or on its periodic sweep), one read of the queue: it reads every shard,
      // once per pass and pool, never once per tenant.
      let candidates = r.candidates;
      if (!candidates) {
        try {
          candidates = (await dueTenants(db, r.type, Math.max(64, 4 * r.budget))).map((tenantId) => ({
            tenantId,
            dueAtMs: r.now,
          }));
        } catch (err) {
          // A node down fails every read of all shards. With a ready index this was its periodic
          // sweep: the index goes on choosing the tenants, so the other nodes' tenants go on.
          if (!r.onSweepFailed) throw err;
          r.onSweepFailed(err);
          return null;
        }
      }
      if (candidates.length === 0) return null;
      const portions = [
        ...shares.split(
          r.type,
          r.budget,
          r.now,
          candidates.map((c) => c.tenantId),
        ),
      ].filter(([, n]) => n > 0);
      const claimed: ClaimedTrigger[] = [];
      const busy: string[] = [];
      const failed = new Map<string, unknown>();
      const written = await fanOutPerTenant(
        portions,
        ([tenantId]) => tenantId,
        async (scope, [[, n]]) =>
          r.send({ type: r.type, budget: n!, owner: r.owner, leaseMs: r.leaseMs, tenantId: scope.tenantId }),
      );
      for (const w of written) {
        const tenantId = w.scope.tenantId!;
        if (w.outcome.status === "fulfilled") {
          claimed.push(...w.outcome.value.claimed);
          busy.push(...w.outcome.value.busy);
          shares.claimed(r.type, tenantId, w.outcome.value, r.now);
        } else {
          failed.set(tenantId, w.outcome.reason);
          shares.failed(r.type, tenantId, r.now);
        }
      }
      shares.passed(r.type, claimed, r.now);
      const asked = new Set(portions.map(([tenantId]) => tenantId));
      // One tenant's failure (its node down) must not hold the others back. Only when every claim
      // failed (the coordinator, or Postgres, away) is the error the caller's.
      const [firstError] = failed.values();
      if (failed.size > 0 && failed.size === portions.length) throw firstError;
      return {
        claimed,
        busy,
        // A tenant whose claim failed stays in the index as it was.
        asked: r.candidates?.filter((c) => asked.has(c.tenantId) && !failed.has(c.tenantId)),
        budget: portions.reduce((a, [, n]) => a + n, 0),
        failed,
      };
    },
    async claim(db, input) {
      if (input.tenantId !== undefined) return claimReport(db, input);
      const tenants = input.candidates ?? (await dueTenants(db, input.type, Math.max(64, 4 * input.budget)));
      const out: ClaimReport = { claimed: [], busy: [] };
      // An even share each (the first tenants due one more), then what is left to those that used
      // theirs, in turn: every slot is offered while a tenant has due work.
      const even = Math.floor(input.budget / Math.max(1, tenants.length));
      let extra = input.budget - even * tenants.length;
      const full: string[] = [];
      const one = async (tenantId: string, budget: number) => {
        if (budget <= 0) return;
        const r = await claimReport(db, { ...input, budget, tenantId, candidates: undefined });
        out.claimed.push(...r.claimed);
        out.busy.push(...r.busy);
        if (r.claimed.length === budget) full.push(tenantId);
      };
      for (const tenantId of tenants) await one(tenantId, even + (extra-- > 0 ? 1 : 0));
      for (const tenantId of full) await one(tenantId, input.budget - out.claimed.length);
      return out;
    },
    handedOff(type, report, shares, now) {
      if (report.claimed.length === 0) return;
      for (const tenantId of new Set(report.claimed.map((c) => c.tenantId))) {
        const mine = report.claimed.filter((c) => c.tenantId === tenantId);
        shares.claimed(type, tenantId, { claimed: mine, busy: [] }, now);
      }
      shares.passed(type, report.claimed, now);
    },
    standby: (input) => input.want.map((w) => ({ ...input, want: [w], tenantId: w.tenantId })),
    async settle(db, items) {
      const written = await fanOutPerTenant(
        items,
        (s) => s.tenantId,
        (scope, group) => settleIn(db, group, scope),
      );
      const failed = written.find((w) => w.outcome.status === "rejected");
      if (failed) throw (failed.outcome as PromiseRejectedResult).reason;
      return written.flatMap((w) => (w.outcome.status === "fulfilled" ? w.outcome.value : []));
    },
    // Which tenants have due cron jobs, and which have onBusy policies, read across the shards once per
    // pass without a lock; then each tenant's fires, and its onBusy decisions, by statements on its
    // shard group alone, never a transaction across tenants.
    async materialize(db: Db, at, lookaheadMs, batch, onError) {
      const due = await dueCronTenants(db, at, lookaheadMs, batch);
      const m: MaterializeResult = { jobs: 0, fired: 0, skipped: 0, ready: [], failed: [] };
      // A few tenants at a time: each is a transaction of its own on its node, and a pass over many
      // tenants one by one would take a round trip per statement per tenant.
      for (let i = 0; i < due.length; i += TENANTS_AT_ONCE) {
        const some = due.slice(i, i + TENANTS_AT_ONCE);
        for (const one of await Promise.all(
          some.map((t) =>
            materialize(db, at, lookaheadMs, batch, t.tenantId).catch((err: unknown) =>
              onError("fires", t.tenantId, err),
            ),
          ),
        )) {
          if (!one) continue;
          m.jobs += one.jobs;
          m.fired += one.fired;
          m.skipped += one.skipped;
          m.ready.push(...one.ready);
          m.failed.push(...one.failed);
        }
      }
      for (const tenantId of await busyPolicyTenants(db))
        await decideBusy(db, at, tenantId).catch((err: unknown) => onError("onBusy", tenantId, err));
      return { m, found: due.reduce((n, t) => n + t.jobs, 0) };
    },
    pendingByTenant: (db, type, tenantIds) => pendingOfTenants(db, type, tenantIds, true),
    findExpiredLeases: (db, limit) => findExpired(db, limit, true),
    dropSpentLeases: (db, limit) => dropSpent(db, limit, true),
    expireLostExecutors: (db, recentMs) => expireLostOnCluster(db, recentMs),
    authenticateKey: (db, hash) => authenticateThenTenant(db, hash),
    createJobs: (db, batch) => insertJobs(db, batch, true),
    shape: (shapes) => shapes.perTenant,
    nodes: async (db) => (cluster ? clusterNodes(db) : []),
  };
}
