// The reaper: expired leases go back to pending as a failed attempt (`lease_expired`), or dead when
// exhausted. The decision is core's; the write is settle() with reap=true (fenced, see reap.ts).
import {
  dropSpentLeases,
  findExpiredLeases,
  layoutOf,
  settleIn,
  type Db,
  type ExpiredLease,
  type Settled,
  type Settlement,
} from "@fairway/store";
import { decideSettlement } from "./settler.ts";

/** Returns the triggers it changed (a lease renewed or settled meanwhile is left alone). `onError`: a
 *  tenant's settle that failed on a Citus cluster, the others written (without it, the pass throws). */
export async function reapExpired(db: Db, now: number, onError?: (err: unknown) => void): Promise<Settled[]> {
  const expired = await findExpiredLeases(db);
  const settlements = expired.map((e) =>
    e.sending
      ? lostInFlight(e)
      : {
          ...decideSettlement(
            e,
            {
              outcome: "lease_expired",
              httpStatus: null,
              durationMs: 0,
              error: `lease expired (owner ${e.leaseOwner ?? "unknown"})`,
              responseBody: null,
              retryAfterMs: null,
            },
            e.leaseExpiresAt,
            now,
          ),
          reap: true,
        },
  );
  const settled = await settleReaped(db, settlements, onError);
  // The claims' lease rows with nothing left running (store reap.ts), a hundred at most per pass.
  await dropSpentLeases(db);
  return settled;
}

/** As the layout writes: one settle, or on a Citus cluster one per tenant. A tenant's failed settle is
 *  reported and the others' rows returned: its triggers are found again next pass (their leases are
 *  still expired), and the reaper's settle is fenced like any. */
async function settleReaped(
  db: Db,
  settlements: Settlement[],
  onError = (err: unknown): void => {
    throw err;
  },
): Promise<Settled[]> {
  if (settlements.length === 0) return [];
  const written = await (await layoutOf(db)).fanOut(
    settlements,
    (s) => s.tenantId,
    (scope, items) => settleIn(db, items, scope),
  );
  for (const w of written) if (w.outcome.status === "rejected") onError(w.outcome.reason);
  return written.flatMap((w) => (w.outcome.status === "fulfilled" ? w.outcome.value : []));
}

/** An at-most-once trigger whose lease was lost after it was recorded as sending: it may have been
 *  delivered, so it is never sent again and ends `unknown`. */
function lostInFlight(e: ExpiredLease): Settlement {
  return {
    id: e.id,
    tenantId: e.tenantId,
    leaseToken: e.leaseToken,
    attempt: e.attempt,
    status: "unknown",
    nextAttemptAt: null,
    reason: "lost_in_flight",
    startedAt: e.leaseExpiresAt,
    durationMs: 0,
    outcome: "lost_in_flight",
    httpStatus: null,
    error: `lease lost after sending began (owner ${e.leaseOwner ?? "unknown"})`,
    responseBody: null,
    pauseJob: false,
    reap: true,
  };
}
