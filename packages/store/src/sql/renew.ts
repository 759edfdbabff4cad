// Lease renewal for long runs: extend every lease this executor still holds, in one fenced statement.
// Returns the ids still held; a trigger missing from the answer was lost (reaped) and must not be settled.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";

export async function renewLeases(
  db: Db,
  leases: Array<{ id: string; leaseToken: string }>,
  leaseMs: number,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const input = JSON.stringify(leases.map((l) => ({ id: l.id, token: l.leaseToken })));
  // The claims' lease rows move on too, so that the reaper does not look through them meanwhile.
  const rows = await query<{ id: string }>(
    db,
    sql`
    WITH renewed AS (
      UPDATE triggers t
         SET lease_expires_at = now() + make_interval(secs => ${leaseMs}::float8 / 1000)
        FROM jsonb_to_recordset(${input}::jsonb) AS x(id text, token text)
       WHERE t.id = x.id AND t.lease_token = x.token AND t.status = 'running'
      RETURNING t.id, t.lease_token, t.lease_expires_at
    ),
    claims AS (
      UPDATE leases l SET expires_at = r.until
        FROM (SELECT lease_token, max(lease_expires_at) AS until FROM renewed GROUP BY 1) r
       WHERE l.token = r.lease_token AND l.expires_at < r.until
    )
    SELECT id FROM renewed`,
  );
  return new Set(rows.map((r) => r.id));
}
