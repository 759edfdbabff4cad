// Settle a batch and, in the same round trip, claim for the tenants it frees from their in-flight cap.
// The cap counts running rows, so an at-cap tenant's next trigger can only be claimed once the settle
// has committed; here each claim is written right behind the settle, sees its decrement and everything
// other executors committed, and takes the freed slots before anyone polls.
//
// Lock order (docs/guarantees.md, "Lock order"): a transaction takes its ledger rows — tenant_pools,
// then tenant_keys, each in key order — in one pass, after the trigger rows it waits for. The settle
// and each claim are such a pass, but one after the other in one transaction they would not be: a
// claim locks the keys its tenant has due, which the settle before it may not hold, and may sort
// before those it does. Two such transactions, or one and a materializer pass, deadlocked. So the
// settle, each claim and each standby claim (standby.ts) are a transaction of their own, written in
// one round trip (pipelineTxs). A claim whose transaction fails is reported as failed, by its token,
// for the in-doubt release (executor in-doubt.ts); a failed settle fails the call, and is retried.
import { pipelineTxs, type Db } from "../db.ts";
import type { Scope } from "../layout/scope.ts";
import { claimStatements, type ClaimedTrigger, type ClaimInput, type ClaimReport } from "./claim.ts";
import { settleStatements, type Settled, type Settlement } from "./settle.ts";
import { standbyStatement, type StandbyInput } from "./standby.ts";
import { claimCallStatements, settleCallStatements } from "./delegated.ts";
import { coldItems } from "./notification-fanout.ts";

export interface HandOff {
  settled: Settled[];
  /** Per claim input, in order, what it claimed (and which tenants another claim held); null where
   *  its transaction failed (it claimed nothing, or its answer was lost: release it by its token). */
  claims: Array<ClaimReport | null>;
  /** Per standby input, in order, what it claimed on standby; null where it failed. */
  standby: Array<ClaimedTrigger[] | null>;
  /** The errors of the claims that failed. */
  failed: unknown[];
}

export async function settleAndClaim(
  db: Db,
  items: Settlement[],
  claims: ClaimInput[],
  standby: StandbyInput[],
  /** One tenant: every item, claim and standby claim is this tenant's (a Citus cluster settles per
   *  tenant). */
  scope: Scope,
): Promise<HandOff> {
  const { tenantId } = scope;
  // A claim over all due tenants would lock ledger rows out of order (above).
  const named = (c: ClaimInput) =>
    tenantId !== undefined || c.tenantId !== undefined || (c.candidates?.length ?? 0) > 0;
  if (claims.some((c) => !named(c) || c.budget <= 0)) {
    throw new Error("settleAndClaim: each claim must name its candidate tenants and a budget above 0");
  }
  // One tenant's settle (without notifications) and claims: each one call of its function (delegated.ts).
  const parts = claims.map((c) =>
    tenantId === undefined ? claimStatements(c) : claimCallStatements({ ...c, tenantId }),
  );
  const settled =
    tenantId !== undefined && coldItems(items).length === 0
      ? settleCallStatements(items, tenantId)
      : settleStatements(items, tenantId);
  const stand = standby.map((s) => standbyStatement(tenantId === undefined ? s : { ...s, tenantId }));
  const [done, ...rest] = await pipelineTxs(db, [
    settled.statements,
    ...parts.map((p) => p.statements),
    ...stand.map((s) => s.statements),
  ]);
  if (done!.status === "rejected") throw done!.reason;
  const failed: unknown[] = [];
  const decoded = <T>(r: PromiseSettledResult<unknown[][]>, decode: (rows: unknown[][]) => T): T | null => {
    if (r.status === "fulfilled") return decode(r.value);
    failed.push(r.reason);
    return null;
  };
  return {
    settled: settled.decode(done!.value),
    claims: parts.map((p, i) => decoded(rest[i]!, p.decode)),
    standby: stand.map((s, i) => decoded(rest[parts.length + i]!, s.decode)),
    failed,
  };
}
