// Settle a batch and, in the same transaction and round trip, claim for the tenants it frees from
// their in-flight cap. The cap counts running rows, so an at-cap tenant's next trigger can only be
// claimed once the settle has committed; here the claim runs right after the settle's statement,
// sees its decrement (same transaction) and everything other executors committed (a new snapshot per
// statement), and takes the freed slots before anyone polls.
//
// Lock order: the settle locks the settled tenants' ledger rows (tenant_pools) in key order, and the
// caller limits each claim here to tenants of this batch (`candidates`), so its charge locks no ledger
// row the transaction does not hold already; everything else the claim locks it takes with SKIP
// LOCKED. (A row fenced out of the settle — its lease was lost — leaves its tenant's row unlocked; if
// that ever closes a cycle, Postgres aborts one side.) A failure rolls the whole transaction back and
// the settle is retried (settler.ts).
//
// After the claims, standby claims (standby.ts) for tenants of the batch: their next triggers, held by
// this executor for the moment one of their runs frees a slot, not counted against their cap.
import { pipelineTx, type Db } from "../db.ts";
import { claimStatements, type ClaimedTrigger, type ClaimInput, type ClaimReport } from "./claim.ts";
import { settleStatements, type Settled, type Settlement } from "./settle.ts";
import { standbyStatement, type StandbyInput } from "./standby.ts";

export interface HandOff {
  settled: Settled[];
  /** Per claim input, in order, what it claimed (and which tenants another claim held). */
  claims: ClaimReport[];
  /** Per standby input, in order, what it claimed on standby. */
  standby: ClaimedTrigger[][];
}

export async function settleAndClaim(
  db: Db,
  items: Settlement[],
  claims: ClaimInput[],
  standby: StandbyInput[] = [],
  /** Every item, claim and standby claim is this tenant's (a Citus cluster settles per tenant). */
  tenantId?: string,
): Promise<HandOff> {
  // A claim over all due tenants would lock ledger rows out of order (above).
  const named = (c: ClaimInput) =>
    tenantId !== undefined || c.tenantId !== undefined || (c.candidates?.length ?? 0) > 0;
  if (claims.some((c) => !named(c) || c.budget <= 0)) {
    throw new Error("settleAndClaim: each claim must name its candidate tenants and a budget above 0");
  }
  const parts = claims.map((c) => claimStatements(tenantId === undefined ? c : { ...c, tenantId }));
  const settled = settleStatements(items, tenantId);
  const first = settled.statements;
  const stand = standby.map((s) => standbyStatement(tenantId === undefined ? s : { ...s, tenantId }));
  const rows = await pipelineTx(db, [
    ...first,
    ...parts.flatMap((p) => p.statements),
    ...stand.flatMap((s) => s.statements),
  ]);
  // Each part's rows, in the order its statements were sent.
  let at = first.length;
  const take = (n: number) => rows.slice(at, (at += n));
  return {
    settled: settled.decode(rows.slice(0, first.length)),
    claims: parts.map((p) => p.decode(take(p.statements.length))),
    standby: stand.map((s) => s.decode(take(s.statements.length))),
  };
}
