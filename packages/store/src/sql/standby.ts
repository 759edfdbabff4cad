// Standby claims: the next triggers of a tenant at its in-flight cap, claimed ahead but not counted
// against the cap. The cap counts tenant_pools.running; a trigger on standby is running (leased to its
// executor, renewed, reaped like any claimed trigger) with `standby` set, and not in that count. Its
// executor starts it in the slot one of the tenant's runs frees, the moment that run finishes, without
// a round trip; the settle of the finished run records the hand-over (settle.ts, `successor`): the
// standby trigger is counted from then on, and the finished one no longer is, in one statement. The
// count never falls below what really runs: the new run starts after the old one ended and is counted
// before the old one stops being counted.
//
// Made in the settle's transaction (store hand-off.ts), after the settle and its hand-off claims, for
// tenants of the batch (the settle holds their ledger rows already); or on its own, right after a
// claim took a tenant to its cap (standbyClaim()). Either way the ledger rows it charges are locked in
// key order, as claim and settle lock them: no lock cycle.
// A key at its own cap (claim-keys.ts: tenant_keys.running, its maxInFlight) has its next triggers held
// the same way, per key: a keyed standby trigger takes over only from a run of its own key, and the
// hand-over counts it in its key as the finished one stops being counted there, so the key's count
// neither rises nor falls (settle.ts, "moved"). Its charge here leaves `running` alone: the tenant lock
// that guards raising it is not needed for a trigger that is not counted.
// Tenants with a rate quota are left to the claims (their tokens are spent under the tenant lock,
// which this statement does not take), and so are keys with one. A tenant with keyed work queued gets
// no standby of its own (its slots go by key: claim-keys.ts), only its capped keys do; the claim a
// settle makes in its transaction (hand-off.ts) refills the rest.
import { sql } from "drizzle-orm";
import { exclusiveFree, keyCharge, keyPolicy, scopeOf } from "./claim-keys.ts";
import { pipelineTx, query, type Db } from "../db.ts";
import { boundedWeight } from "./columns.ts";
import { type ClaimedTrigger, claimResult, decodeClaim, fairOrder, leaseOf, oneTenantRows } from "./claim.ts";

export interface StandbyInput {
  type: string;
  owner: string;
  leaseMs: number;
  /** Per tenant, how many triggers to hold on standby (the statement claims at most its cap); with
   *  `key`, per key of the tenant: triggers of that key, held only while the key is at its own cap. */
  want: Array<{ tenantId: string; n: number; key?: string | null }>;
  /** Every `want` is this tenant's: the statement runs on its shard alone on a Citus cluster. */
  tenantId?: string;
  /** The claim's lease token, as ClaimInput's. */
  leaseToken?: string;
}

/** The standby claim's statement, and the decoding of its row. */
export function standbyStatement(input: StandbyInput) {
  const { type, owner, leaseMs, tenantId } = input;
  const one = tenantId !== undefined;
  const bound = one ? sql`${tenantId}` : undefined;
  const { at, tenant } = scopeOf(bound);
  const leaseToken = input.leaseToken ?? crypto.randomUUID();
  const want = JSON.stringify(input.want.map((w) => [w.tenantId, w.n, w.key ?? null]));
  const statement = sql`
    WITH want AS (SELECT x->>0 AS id, (x->>1)::int AS n, x->>2 AS key FROM jsonb_array_elements(${want}::jsonb) AS x),
    clock0 AS (SELECT coalesce((SELECT vclock FROM pools WHERE type = ${type}), 0) AS v),
    -- Tenants at their cap (a tenant with room is the claims'), with no rate quota, in an active pool.
    st AS (
      SELECT t.id, ${boundedWeight("t")} AS weight, coalesce(tp.vtime, 0) AS vtime, coalesce(tp.cost_ms, 100) AS cost_ms,
             -- The claim's dueIds() without keyed rows (one queued since the test below looked would
             -- be counted in no key).
             ARRAY(SELECT x.id FROM trigger_queue x
                    WHERE x.tenant_id = ${tenant(sql`t.id`)} AND x.type = ${type} AND x.next_attempt_at <= now()
                      AND x.key IS NULL AND ${exclusiveFree(sql`x`, bound)}
                    ORDER BY x.priority DESC NULLS LAST, x.next_attempt_at
                    LIMIT least(w.n, t.max_in_flight)) AS due_ids
        FROM want w
        JOIN tenants t ON t.id = w.id
        LEFT JOIN tenant_pools tp ON tp.tenant_id = t.id AND tp.type = ${type} ${at("tp")}
       WHERE t.status = 'active' AND t.rate_per_second IS NULL AND w.n > 0 AND w.key IS NULL ${one ? sql`AND t.id = ${tenantId}` : sql``}
         AND NOT EXISTS (SELECT 1 FROM tenant_keys k WHERE k.tenant_id = ${tenant(sql`t.id`)} AND k.queued > 0)
         AND NOT EXISTS (SELECT 1 FROM pools p WHERE p.type = ${type} AND p.paused)
         AND (SELECT coalesce(sum(r.running), 0) FROM tenant_pools r WHERE r.tenant_id = ${tenant(sql`t.id`)}) >= t.max_in_flight
    ),
    -- Keys at their own cap, with no rate quota, of active tenants without one: their next due
    -- triggers, in the claim's order within a key (claim-keys.ts, keyedIds), at most the key's cap.
    -- Not those of jobs with an onBusy policy: while their key is busy they wait in the queue for the
    -- materializer's decision (on-busy.ts), which a standby lease would take from them.
    kst AS (
      SELECT t.id, ${boundedWeight("t")} AS weight, coalesce(tp.vtime, 0) AS vtime, coalesce(tp.cost_ms, 100) AS cost_ms,
             t.key_max_in_flight, t.key_rate_per_second, t.key_weight,
             ARRAY(SELECT x.id FROM trigger_queue x
                    WHERE x.tenant_id = ${tenant(sql`t.id`)} AND x.type = ${type} AND x.key = w.key AND x.next_attempt_at <= now()
                      AND ${exclusiveFree(sql`x`, bound)}
                      AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = x.job_id AND j.on_busy <> 'queue' ${at("j")})
                    ORDER BY x.priority DESC NULLS LAST, x.next_attempt_at
                    LIMIT least(w.n, p.cap)) AS due_ids
        FROM want w
        JOIN tenants t ON t.id = w.id
        JOIN tenant_keys k ON k.tenant_id = t.id AND k.key = w.key ${at("k")}
        LEFT JOIN tenant_pools tp ON tp.tenant_id = t.id AND tp.type = ${type} ${at("tp")}
       CROSS JOIN LATERAL (${keyPolicy(sql`k`, sql`t`)}) p
       WHERE t.status = 'active' AND t.rate_per_second IS NULL AND w.n > 0 AND w.key IS NOT NULL ${one ? sql`AND t.id = ${tenantId}` : sql``}
         AND NOT EXISTS (SELECT 1 FROM pools p WHERE p.type = ${type} AND p.paused)
         AND p.cap IS NOT NULL AND p.rate IS NULL AND k.running >= p.cap
    ),
    -- One row per tenant (a tenant's keys share its ledger row).
    room AS (
      SELECT id, weight, cost_ms, 0 AS free, greatest(vtime, (SELECT v FROM clock0)) AS vstart
        FROM (SELECT id, weight, vtime, cost_ms FROM st UNION SELECT id, weight, vtime, cost_ms FROM kst) u
    ),
    -- The key ledger's view of the tenants (keyCharge reads it as the claim's "cand").
    cand AS (SELECT DISTINCT id, cost_ms, key_max_in_flight, key_rate_per_second, key_weight FROM kst),
    -- As in the claim: trigger rows locked SKIP LOCKED, by their row versions, only while pending.
    locked AS (
      SELECT t.ctid, t.id, t.status FROM triggers t
       WHERE t.id = ANY (ARRAY(SELECT unnest(due_ids) FROM st UNION ALL SELECT unnest(due_ids) FROM kst)) ${at("t")}
         FOR UPDATE SKIP LOCKED
    ),
    claimed AS (
      UPDATE triggers t
         SET status = 'running', standby = true, lease_owner = ${owner}, lease_token = ${leaseToken},
             lease_expires_at = now() + make_interval(secs => ${leaseMs}::float8 / 1000),
             attempt_count = t.attempt_count + 1, updated_at = now()
       WHERE t.ctid = ANY (ARRAY(SELECT ctid FROM locked WHERE status = 'pending')) ${at("t")}
      RETURNING t.id, t.tenant_id, t.job_id, t.kind, t.priority, t.scheduled_for, t.attempt_count, t.max_attempts, t.key
    ),
    dequeued AS (
      DELETE FROM trigger_queue q
       WHERE q.id = ANY (ARRAY(SELECT id FROM claimed UNION ALL SELECT id FROM locked WHERE status <> 'pending')) ${at("q")}
      RETURNING q.tenant_id, q.key
    ),
    ${
      one
        ? leaseOf(tenantId, leaseToken)
        : sql`lease AS (
      INSERT INTO leases (token, owner, expires_at, trigger_ids)
      SELECT ${leaseToken}, ${owner}, now() + make_interval(secs => ${leaseMs}::float8 / 1000), array_agg(id)
        FROM claimed HAVING count(*) > 0
    ),`
    }
    got AS (SELECT tenant_id, count(*)::int AS n FROM claimed GROUP BY tenant_id),
    -- Charged like a claim (virtual time), but not counted as running. A tenant at its cap has a ledger
    -- row.
    ledger AS MATERIALIZED (
      SELECT tp.tenant_id, got.n * r.cost_ms / r.weight AS charge FROM tenant_pools tp
        JOIN got ON got.tenant_id = tp.tenant_id JOIN room r ON r.id = tp.tenant_id
       WHERE tp.type = ${type} ${at("tp")}
       ORDER BY tp.tenant_id
         FOR UPDATE OF tp
    ),
    charge AS (
      UPDATE tenant_pools tp SET vtime = greatest(tp.vtime, (SELECT v FROM clock0)) + l.charge
        FROM ledger l
       WHERE tp.tenant_id = l.tenant_id AND tp.type = ${type} ${at("tp")}
      RETURNING 1
    ),
    -- The keys' ledger (queued, vtime), after the tenant_pools rows; running is left to the hand-over.
    ${keyCharge(bound, true)}
    ${claimResult(false, tenantId)}`;
  return {
    // For one tenant, its lease row first (claim.ts, oneTenantRows).
    statements: one ? [oneTenantRows(input, tenantId, leaseToken)[0], statement] : [statement],
    /** From the rows of each of the statements, in order. */
    decode(results: unknown[][]): ClaimedTrigger[] {
      const rows = results[results.length - 1];
      const { claimed, slots, vclock, ord } = decodeClaim(
        rows[0] as Parameters<typeof decodeClaim>[0],
        type,
        leaseToken,
      );
      return fairOrder(claimed, slots, vclock, ord);
    },
  };
}

/** A standby claim on its own (not in a settle's transaction). */
export async function standbyClaim(db: Db, input: StandbyInput): Promise<ClaimedTrigger[]> {
  if (input.want.length === 0) return [];
  const s = standbyStatement(input);
  return s.decode(s.statements.length === 1 ? [await query(db, s.statements[0])] : await pipelineTx(db, s.statements));
}
