// The reaper: expired leases go back to pending as a failed attempt (`lease_expired`), or dead when
// exhausted. The decision is core's; the write is settle() with reap=true (fenced, see reap.ts).
import {
  dropSpentLeases,
  findExpiredLeases,
  settle,
  type Db,
  type ExpiredLease,
  type Settled,
  type Settlement,
} from "@fairway/store";
import { decideSettlement } from "./settler.ts";

/** Returns the triggers it changed (a lease renewed or settled meanwhile is left alone). */
export async function reapExpired(db: Db, now: number): Promise<Settled[]> {
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
  const settled = await settle(db, settlements); // an empty list sends no statement
  // The claims' lease rows with nothing left running (store reap.ts), a hundred at most per pass.
  await dropSpentLeases(db);
  return settled;
}

/** An at-most-once trigger whose lease was lost after it was recorded as sending: it may have been
 *  delivered, so it is never sent again and ends `unknown`. */
function lostInFlight(e: ExpiredLease): Settlement {
  return {
    id: e.id,
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
