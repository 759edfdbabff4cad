// Reads that feed the ready-tenant index (docs/architecture.md) from the truth: each tenant's earliest pending
// trigger in a pool. Served by trigger_queue_type_idx (type, tenant_id, next_attempt_at).
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";

export interface TenantDue {
  tenantId: string;
  /** Epoch ms of the earliest pending trigger, or null when the tenant has none in this pool. */
  dueAtMs: number | null;
}

/** pendingByTenant() as a layout reads it. `perTenant`: the given tenants' read a query each, on the
 *  tenant's shard alone on a Citus cluster, which takes no subquery correlated with a list
 *  (docs/scaling.md). */
export async function pendingOfTenants(
  db: Db,
  type: string,
  tenantIds: string[] | undefined,
  perTenant: boolean,
): Promise<TenantDue[]> {
  if (tenantIds && perTenant)
    return Promise.all(
      tenantIds.map(async (tenantId) => {
        const [r] = await query<{ dueAtMs: number | null }>(
          db,
          sql`SELECT (extract(epoch FROM min(next_attempt_at)) * 1000)::float8 AS "dueAtMs" FROM trigger_queue
               WHERE type = ${type} AND tenant_id = ${tenantId}`,
        );
        return { tenantId, dueAtMs: r?.dueAtMs == null ? null : Number(r.dueAtMs) };
      }),
    );
  const rows = tenantIds
    ? await query<{ tenantId: string; dueAtMs: number | null }>(
        db,
        sql`
        SELECT c.id AS "tenantId",
               (SELECT (extract(epoch FROM min(x.next_attempt_at)) * 1000)::float8 FROM trigger_queue x
                 WHERE x.type = ${type} AND x.tenant_id = c.id) AS "dueAtMs"
          FROM jsonb_array_elements_text(${JSON.stringify(tenantIds)}::jsonb) AS c(id)`,
      )
    : await query<{ tenantId: string; dueAtMs: number | null }>(
        db,
        sql`
        SELECT tenant_id AS "tenantId", (extract(epoch FROM min(next_attempt_at)) * 1000)::float8 AS "dueAtMs"
          FROM trigger_queue WHERE type = ${type}
         GROUP BY tenant_id`,
      );
  return rows.map((r) => ({ tenantId: r.tenantId, dueAtMs: r.dueAtMs === null ? null : Number(r.dueAtMs) }));
}
