// The reaper: expired leases go back to pending as a failed attempt (`lease_expired`), or dead when
// exhausted. The decision is core's; the write is settle() with reap=true (fenced, see reap.ts).
import { dropSpentLeases, findExpiredLeases, settle, type Db, type Settled } from "@fairway/store";
import { decideSettlement } from "./settler.ts";

/** Returns the triggers it changed (a lease renewed or settled meanwhile is left alone). */
export async function reapExpired(db: Db, now: number): Promise<Settled[]> {
  const expired = await findExpiredLeases(db);
  const settlements = expired.map((e) => ({
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
  }));
  const settled = await settle(db, settlements); // an empty list sends no statement
  // The claims' lease rows with nothing left running (store reap.ts), a hundred at most per pass.
  await dropSpentLeases(db);
  return settled;
}
