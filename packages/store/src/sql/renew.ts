// Lease renewal for long runs: extend every lease this executor still holds, in one fenced statement.
// Returns the ids still held; a trigger missing from the answer was lost (reaped) and must not be settled.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { scopeTo, type Scope } from "../layout/scope.ts";

/** `scope` one tenant: every lease is that tenant's, and each table is read at it, so that on a Citus
 *  cluster the statement goes to the tenant's shard alone (docs/scaling.md); all tenants: any tenants'. */
export async function renewLeases(
  db: Db,
  leases: Array<{ id: string; leaseToken: string }>,
  leaseMs: number,
  scope: Scope,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const rows = await query<{ id: string }>(db, renewStatement(leases, leaseMs, scope.tenantId));
  return new Set(rows.map((r) => r.id));
}

export function renewStatement(leases: Array<{ id: string; leaseToken: string }>, leaseMs: number, tenantId?: string) {
  const at = scopeTo(tenantId);
  const input = JSON.stringify(leases.map((l) => ({ id: l.id, token: l.leaseToken })));
  // The claims' lease rows move on too, so that the reaper does not look through them meanwhile.
  return sql`
    WITH renewed AS (
      UPDATE triggers t
         SET lease_expires_at = now() + make_interval(secs => ${leaseMs}::float8 / 1000)
        FROM jsonb_to_recordset(${input}::jsonb) AS x(id text, token text)
       WHERE t.id = x.id AND t.lease_token = x.token AND t.status = 'running' ${at("t")}
      RETURNING t.id, t.lease_token, t.lease_expires_at
    ),
    claims AS (
      UPDATE leases l SET expires_at = r.until
        FROM (SELECT lease_token, max(lease_expires_at) AS until FROM renewed GROUP BY 1) r
       WHERE l.token = r.lease_token AND l.expires_at < r.until ${at("l")}
    )
    SELECT id FROM renewed`;
}
