// Release claimed-but-unstarted triggers on graceful stop: back to pending, the claim's attempt
// number given back, no attempt row (nothing ran). Fenced like settle.
import { sql } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { scopeTo, type Scope } from "../layout/scope.ts";

/** `scope` one tenant: every lease is that tenant's, and each table is read at it, so that on a Citus
 *  cluster the statement goes to the tenant's shard alone (docs/scaling.md); all tenants: any tenants'. */
export async function releaseLeases(
  db: Db,
  leases: Array<{ id: string; leaseToken: string }>,
  scope: Scope,
): Promise<number> {
  if (leases.length === 0) return 0;
  const rows = await query<{ id: string }>(db, releaseStatement(leases, scope.tenantId));
  return rows.length;
}

/** Release what claims left running under these lease tokens: claims whose answer never came (a
 *  connection cut at COMMIT, a failover, a timed-out settle) may have committed, leasing triggers to an
 *  executor that never received them. Their lease rows name the triggers; each is released as above,
 *  fenced by its token, so a trigger settled or reaped meanwhile is left alone, and a claim that did
 *  not commit releases nothing. `scope` one tenant: every token's claim was that tenant's. */
export async function releaseClaims(db: Db, tokens: string[], scope: Scope): Promise<number> {
  // Tokens are UUIDs (ClaimInput.leaseToken): safe in an array literal as they are.
  if (tokens.length === 0) return 0;
  const at = scopeTo(scope);
  const leases = await query<{ token: string; triggerIds: string[] }>(
    db,
    sql`SELECT l.token, l.trigger_ids AS "triggerIds" FROM leases l
         WHERE l.token = ANY (${`{${tokens.join(",")}}`}::text[]) ${at("l")}`,
  );
  return releaseLeases(
    db,
    leases.flatMap((l) => l.triggerIds.map((id) => ({ id, leaseToken: l.token }))),
    scope,
  );
}

export function releaseStatement(leases: Array<{ id: string; leaseToken: string }>, tenantId?: string) {
  const at = scopeTo(tenantId);
  const input = JSON.stringify(leases.map((l) => ({ id: l.id, token: l.leaseToken })));
  // Back into the queue through the sync trigger (migration 0009); the pools' running counts, in the
  // key order claim and settle lock them in.
  return sql`
    WITH released AS (
      UPDATE triggers t
         -- An at-most-once run recorded as sending (sending.ts) may have reached its target: never again.
         SET status = CASE WHEN t.sending_attempt = t.attempt_count THEN 'unknown' ELSE 'pending' END,
             reason = CASE WHEN t.sending_attempt = t.attempt_count THEN 'lost_in_flight' ELSE t.reason END,
             -- now() is read once in FROM: Citus refuses it inside a CASE of a distributed UPDATE.
             finished_at = CASE WHEN t.sending_attempt = t.attempt_count THEN x.now END,
             attempt_count = CASE WHEN t.sending_attempt = t.attempt_count THEN t.attempt_count ELSE t.attempt_count - 1 END,
             lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, updated_at = now()
        FROM (SELECT y.*, now() AS now FROM jsonb_to_recordset(${input}::jsonb) AS y(id text, token text)) x
       WHERE t.id = x.id AND t.lease_token = x.token AND t.status = 'running' ${at("t")}
      -- standby is left as it was: what it returns is whether the row was counted (standby.ts).
      RETURNING t.id, t.tenant_id, t.type, t.standby, t.key
    ),
    locked AS MATERIALIZED (
      SELECT tp.tenant_id, tp.type, g.n FROM tenant_pools tp
        JOIN (SELECT tenant_id, type, count(*)::int AS n FROM released WHERE NOT standby GROUP BY 1, 2) g
          ON g.tenant_id = tp.tenant_id AND g.type = tp.type
       WHERE true ${at("tp")}
       ORDER BY tp.tenant_id, tp.type
         FOR UPDATE OF tp
    ),
    uncount AS (
      UPDATE tenant_pools tp SET running = tp.running - l.n
        FROM locked l WHERE tp.tenant_id = l.tenant_id AND tp.type = l.type ${at("tp")}
    ),
    -- And their keys' running counts (tenant_keys), in key order, after every tenant_pools row
    -- (count(*) reads all of "locked"; EXISTS would stop at its first).
    klocked AS MATERIALIZED (
      SELECT k.tenant_id, k.key, g.n FROM tenant_keys k
        JOIN (SELECT tenant_id, key, count(*)::int AS n FROM released WHERE NOT standby AND key IS NOT NULL GROUP BY 1, 2) g
          ON g.tenant_id = k.tenant_id AND g.key = k.key
       WHERE (SELECT count(*) FROM locked) >= 0 ${at("k")}
       ORDER BY k.tenant_id, k.key
         FOR UPDATE OF k
    ),
    kuncount AS (
      UPDATE tenant_keys k SET running = k.running - l.n
        FROM klocked l WHERE k.tenant_id = l.tenant_id AND k.key = l.key ${at("k")}
    )
    SELECT id FROM released`;
}
