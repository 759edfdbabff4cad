// The fair claim: one transaction, two statements, any number of executors at once.
//
// Statement 1 picks candidate tenants for the pool and locks their rows FOR NO KEY UPDATE SKIP LOCKED. The
// lock serialises cap accounting per tenant: another executor simply takes other tenants this tick.
// Statement 2 runs with a NEW snapshot (READ COMMITTED), taken after the locks were granted, so the
// running count sees every claim committed by whoever held a lock before us. Computing the count in
// the same statement that takes the lock would read an older snapshot and overshoot caps under
// concurrency — the bug behind cap overshoot in other schedulers.
//
// Allocation is start-time weighted fair queuing, the same rule as core `allocate()`: tenant i's k-th
// slot has virtual start vstart_i + (k-1)·cost_i/weight_i; the `budget` smallest slots win. Room per
// tenant = min(maxInFlight − running, rate tokens, due). vstart = max(vtime, pool clock): a tenant back
// from idle starts level with the busiest, never with banked credit. Every tenant's share is claimed
// in one UPDATE, not one round trip per tenant.
//
// Fairness keys, the second level: a tenant with keyed work queued fills its slots by key (claim-keys.ts).
import { sql, type SQL } from "drizzle-orm";
import { jsonColumn, pipelineTx, query, type Db } from "../db.ts";
import { packRows, unpackRows } from "./packed.ts";
import { boundedRate, boundedWeight } from "./columns.ts";
import { capsFirst, exclusiveFree, keyCharge, keyedIds, keyResult, scopeOf } from "./claim-keys.ts";

export interface ClaimInput {
  type: string;
  /** Free slots in this executor's pool. */
  budget: number;
  owner: string;
  leaseMs: number;
  /** Candidate tenants from the ready-tenant index; when absent they are found in Postgres. */
  candidates?: string[];
  /** Claim for this one tenant only (the candidates are ignored): the statements name it on every
   *  table, so that on a Citus cluster they run on its shard alone (docs/scaling.md). They leave the
   *  pool clock to the caller (advancePoolClock) and weigh no rivals. */
  tenantId?: string;
  /** The claim's lease token, chosen by the caller so that a claim whose answer never came can be
   *  released by it (release.ts, releaseClaims); a new one when absent. */
  leaseToken?: string;
}

export interface ClaimedTrigger {
  id: string;
  tenantId: string;
  jobId: string;
  type: string;
  kind: string;
  scheduledFor: Date;
  attempt: number;
  maxAttempts: number;
  leaseToken: string;
  priority: number;
  jobName: string;
  target: { url: string; method?: string; headers?: Record<string, string>; body?: unknown } | null;
  payload: unknown;
  timeoutMs: number | null;
  initialDelayMs: number;
  maxDelayMs: number;
  backoff: "exponential" | "linear" | "fixed";
  jitter: "full" | "none";
  /** Signing secrets in force: the current one, plus the previous one during a rotation overlap. */
  secrets: string[];
  /** Its tenant had no in-flight room left after this claim: settling it frees a slot the tenant is
   *  waiting for, so the settler writes it sooner (settler.ts). */
  atCap: boolean;
  /** The virtual start of its WFQ slot (the allocation of step 3): its tenant's k-th trigger in this claim
   *  starts at vstart + (k − 1) · cost ÷ weight. Comparable across the claims of one pool: the executor
   *  starts what it has queued in this order, not in the order it was claimed (pool.ts). */
  vt: number;
  /** The pool clock this claim started its tenant's slots at, when the tenant had no backlog of virtual
   *  time ahead of the clock (new, or back from idle); null otherwise. The clock runs ahead of what the
   *  executor has started by the depth of its queue, so such slots are moved back to what it is starting
   *  now (pool.ts): a tenant that comes due behind a deep queue does not wait for the queue to drain. */
  vclock: number | null;
  /** The job's delivery mode: at_most_once is recorded as sending before it starts (sending.ts). */
  delivery: string;
  /** Its job's last triggers dead-lettered: a success ends the streak and notifies (notification-fanout.ts). */
  failing: boolean;
  /** Its job's tags (jobs.tags), carried in the delivery envelope; null: none. */
  tags: Record<string, string> | null;
  /** Its fairness key (jobs.key), or null. atCap is also set when this claim took its key to the key's
   *  cap: its settle frees the slot the key waits for. */
  key: string | null;
  /** Its job's create-time trace context (jobs.traceparent, tracestate), or null; `join`: a one-time
   *  job, whose attempts join that trace (a cron job's fires only link to it). */
  trace: { parent: string; state: string | null; join: boolean } | null;
}

/** Tenants with queued work in the pool, each with its earliest queued trigger's due time, found by a
 *  skip-scan over the queue's type index (one probe per tenant with queued work, never a scan of all
 *  tenants or of a big tenant's backlog). The probe lands on the tenant's first entry in (type,
 *  tenant_id, next_attempt_at) order, which is its earliest: statement 1 needs no second probe to see
 *  whether the tenant has anything due. */
const candidateScan = (type: string) => sql`
  WITH RECURSIVE cand(tenant_id, first_due) AS (
    (SELECT tenant_id, next_attempt_at FROM trigger_queue WHERE type = ${type}
      ORDER BY tenant_id, next_attempt_at LIMIT 1)
    UNION ALL
    SELECT n.tenant_id, n.next_attempt_at FROM cand CROSS JOIN LATERAL (
      SELECT x.tenant_id, x.next_attempt_at FROM trigger_queue x
       WHERE x.type = ${type} AND x.tenant_id > cand.tenant_id
       ORDER BY x.tenant_id, x.next_attempt_at LIMIT 1) n
  )
  SELECT tenant_id, first_due FROM cand`;

/** Statement 1: candidate tenants with due work and room under their cap, best first (lowest virtual
 *  time), locked. Their ids are also left in the transaction-local setting `fairway.claim_tenants`, so
 *  that statement 2 can be sent in the same round trip (db.ts pipelineTx). The best candidates that
 *  another claim holds locked are left in `fairway.claim_rivals` (and returned as `busy`): statement 2
 *  gives the locked ones only the slots they would win against these too. Without that, an executor
 *  whose claim raced another's and locked one light tenant gave it the whole budget.
 *
 *  It also sets `plan_cache_mode` for the rest of the transaction: for claims of up to a thousand
 *  rows, statement 2 is then planned once per connection instead of on every claim (planMode(),
 *  docs/decisions/0023-claim-statement-costs.md). For this transaction only: set for the whole
 *  connection, it would take the custom plans of the materializer's and the API's statements too. */
function lockCandidatesSql(input: ClaimInput) {
  if (input.tenantId !== undefined) return lockTenantSql(input, input.tenantId);
  const { type } = input;
  const maxTenants = Math.min(1000, Math.max(16, input.budget));
  // Candidates from the ready index come without a due time: for them it is looked up.
  const [source, due] = input.candidates
    ? [
        sql`SELECT jsonb_array_elements_text(${JSON.stringify(input.candidates)}::jsonb) AS tenant_id`,
        sql`EXISTS (SELECT 1 FROM trigger_queue d
                    WHERE d.tenant_id = t.id AND d.type = ${type} AND d.next_attempt_at <= now())`,
      ]
    : [candidateScan(type), sql`c.first_due <= now()`];
  return sql`
    WITH c AS (${source}),
    eligible AS MATERIALIZED (
      SELECT t.id, coalesce(tp.vtime, 0) AS vtime
        FROM tenants t
        JOIN c ON c.tenant_id = t.id
        LEFT JOIN tenant_pools tp ON tp.tenant_id = t.id AND tp.type = ${type}
       WHERE t.status = 'active'
         AND ${due}
         AND NOT EXISTS (SELECT 1 FROM pools p WHERE p.type = ${type} AND p.paused) -- pool-pause.ts
         AND ${runningOf(sql`t.id`)} < t.max_in_flight
    ),
    locked AS (
      SELECT t.id
        FROM tenants t
        JOIN eligible e ON e.id = t.id
       ORDER BY e.vtime, t.id
       LIMIT ${maxTenants}
         -- NO KEY UPDATE: claimers exclude each other per tenant, but inserts of the tenant's jobs and
         -- triggers (whose foreign-key checks take KEY SHARE on this row) never wait for a claim.
         FOR NO KEY UPDATE OF t SKIP LOCKED
    ),
    -- Best candidates another claim holds: the rivals statement 2 allocates against.
    rivals AS (
      SELECT e.id FROM (SELECT id, vtime FROM eligible ORDER BY vtime, id LIMIT ${maxTenants}) e
       WHERE e.id NOT IN (SELECT id FROM locked)
    )
    SELECT set_config('fairway.claim_tenants', coalesce(jsonb_agg(id), '[]'::jsonb)::text, true) AS ids,
           set_config('fairway.claim_rivals', (SELECT coalesce(jsonb_agg(id), '[]'::jsonb) FROM rivals)::text, true) AS busy,
           set_config('plan_cache_mode', ${planMode(input.budget)}, true) AS plan
      FROM locked`;
}

/** Statement 1 for one tenant: its row, locked when it is eligible (as above), and no rivals. The
 *  lock is taken SKIP LOCKED as above: a hand-off claim runs after its settle locked the tenant's
 *  ledger rows, and waiting here for a claim that waits for those would deadlock. The setting's value
 *  is made from the locked row (an aggregate of it), so that on a Citus cluster it is set on the
 *  tenant's node, where statement 2 reads it (gateOf). */
function lockTenantSql(input: ClaimInput, tenantId: string) {
  const { type } = input;
  return sql`
    WITH eligible AS MATERIALIZED (
      SELECT t.id FROM tenants t
       WHERE t.id = ${tenantId} AND t.status = 'active'
         AND EXISTS (SELECT 1 FROM trigger_queue d
                      WHERE d.tenant_id = ${tenantId} AND d.type = ${type} AND d.next_attempt_at <= now())
         AND NOT EXISTS (SELECT 1 FROM pools p WHERE p.type = ${type} AND p.paused)
         AND ${runningOf(sql`${tenantId}`)} < t.max_in_flight
    ),
    locked AS (
      SELECT t.id FROM tenants t
       WHERE t.id = ${tenantId} AND t.id IN (SELECT id FROM eligible)
         FOR NO KEY UPDATE OF t SKIP LOCKED
    )
    SELECT set_config('fairway.claim_tenants', coalesce(jsonb_agg(id), '[]'::jsonb)::text, true) AS ids,
           (SELECT coalesce(jsonb_agg(e.id), '[]'::jsonb) FROM eligible e WHERE e.id NOT IN (SELECT id FROM locked)) AS busy,
           set_config('plan_cache_mode', ${planMode(input.budget)}, true) AS plan
      FROM locked`;
}

/** Whether statement 1 locked the tenant row `t` (in its setting). The setting's name is made with a
 *  column of the row so that Citus, which evaluates a function of constants on the coordinator before
 *  it sends a write away, reads it on the tenant's node, where statement 1 set it in this transaction
 *  (Citus keeps one connection per node for a transaction that locked or wrote there). */
const gateOf = (t: string) =>
  sql`current_setting('fairway.claim_tenants' || left(${sql.raw(t)}.id, 0))::jsonb ? ${sql.raw(t)}.id`;

/** A tenant's running triggers, over all its pools: tenant_pools.running (schema.ts). */
const runningOf = (tenantId: ReturnType<typeof sql>) =>
  sql`(SELECT coalesce(sum(r.running), 0) FROM tenant_pools r WHERE r.tenant_id = ${tenantId})`;

/** Planning statement 2 costs about as much as running it for a small claim; for big claims the plan
 *  made for the call's own values saves more than planning costs (docs/decisions/0023). */
const GENERIC_PLAN_MAX_BUDGET = 1000;
function planMode(budget: number): string {
  // In a function's body (delegated.ts) the budget is an argument, not a number, and the choice is
  // left to PostgreSQL: on a Citus node a generic plan of a statement that names its shard by an
  // argument cannot be made ("could not create distributed plan"), and Citus asks for custom plans.
  if (typeof budget !== "number") return "auto";
  return budget <= GENERIC_PLAN_MAX_BUDGET ? "force_generic_plan" : "force_custom_plan";
}

/** How many of one tenant's due triggers a claim looks at: twice its weighted share of the budget (at
 *  least 16), the share being weight ÷ cost over the candidate tenants, as the allocation spends it.
 *  Counting every tenant's backlog up to the whole budget cost half the claim (100 tenants × budget
 *  rows); the caps add up to twice the budget. A tenant cut short here only waits for the next claim,
 *  which the executor runs at once whenever a claim got anything and slots are free — so the pool
 *  stays work-conserving. Weighted, not even: with twice an even share, a tenant whose weighted share
 *  is over two thirds among three could never get it. */
export function dueScanCap(budget: number, share: number): number {
  return Math.min(budget, Math.max(16, Math.ceil(2 * budget * share)));
}

/** Statement 2, for the tenants statement 1 locked (read from its transaction-local setting). */
function claimLockedSql(input: ClaimInput, leaseToken: string) {
  const { type, budget, owner, leaseMs, tenantId } = input;
  const one = tenantId !== undefined;
  const bound = one ? sql`${tenantId}` : undefined;
  const { at, tenant } = scopeOf(bound);
  const cap = sql`least(${budget}::int, greatest(16, ceil(2.0 * ${budget}::int * c.share)))::int`;
  return sql`
    WITH ${
      one
        ? sql`ids AS (SELECT t0.id FROM tenants t0 WHERE t0.id = ${tenantId} AND ${gateOf("t0")}),`
        : sql`ids AS (SELECT jsonb_array_elements_text(current_setting('fairway.claim_tenants')::jsonb) AS id),`
    }
    -- The candidates with their ledger rows, and each one's weighted share of this claim, for
    -- dueScanCap() below (the candidates are known only here when statement 1 was pipelined).
    cand AS (
      SELECT t.id, ${boundedWeight("t")} AS weight, t.max_in_flight, ${boundedRate("t")} AS rate_per_second,
             t.burst, t.rate_tokens, t.rate_updated_at,
             coalesce(tp.vtime, 0) AS vtime,
             coalesce(tp.cost_ms, 100) AS cost_ms,
             (${boundedWeight("t")} / coalesce(tp.cost_ms, 100))
               / sum(${boundedWeight("t")} / coalesce(tp.cost_ms, 100)) OVER () AS share,
             t.key_max_in_flight, t.key_rate_per_second, t.key_weight,
             -- Keyed work queued (one probe of tenant_keys_due_idx): its slots go by key (keyedIds).
             EXISTS (SELECT 1 FROM tenant_keys k WHERE k.tenant_id = ${tenant(sql`t.id`)} AND k.queued > 0) AS keyed
        FROM tenants t
        LEFT JOIN tenant_pools tp ON tp.tenant_id = t.id AND tp.type = ${type} ${at("tp")}
       WHERE t.id IN (SELECT id FROM ids) AND t.status = 'active' ${one ? sql`AND t.id = ${tenantId}` : sql``}
    ),
    st AS (
      SELECT c.id, c.weight, c.max_in_flight, c.vtime, c.cost_ms, c.keyed,
             CASE WHEN c.rate_per_second IS NULL THEN NULL ELSE
               least(coalesce(c.burst, greatest(1, ceil(c.rate_per_second)))::float8,
                     coalesce(c.rate_tokens, coalesce(c.burst, greatest(1, ceil(c.rate_per_second)))::float8)
                     + extract(epoch FROM now() - coalesce(c.rate_updated_at, now())) * c.rate_per_second)
             END AS tokens,
             ${runningOf(tenant(sql`c.id`))} AS running,
             -- The tenant's first due queue rows (dueIds), up to dueScanCap(): how many it has due, and
             -- which "picked" takes.
             CASE WHEN c.keyed THEN ${keyedIds(type, cap, bound)}
                  ELSE ${dueIds(type, tenant(sql`c.id`), cap, bound)}
             END AS due_ids
        FROM cand c
    ),
    -- The pool clock as this statement found it: where a tenant back from idle starts.
    clock0 AS (SELECT coalesce((SELECT vclock FROM pools WHERE type = ${type}), 0) AS v),
    room AS (
      SELECT id, weight, cost_ms, tokens, max_in_flight - running AS free,
             greatest(vtime, (SELECT v FROM clock0)) AS vstart,
             greatest(0, least(max_in_flight - running, cardinality(due_ids),
                               coalesce(floor(tokens)::bigint, ${budget}::bigint)))::int AS room
        FROM st
    ),
    ${one ? sql`slots AS (${ownSlots(budget)}),` : rivalSlots(type, budget)}
    alloc AS (SELECT id, count(*)::int AS n FROM slots WHERE NOT rival GROUP BY id),
    -- Each tenant's share of its due queue rows, best first (st.due_ids). Not locked here: the trigger
    -- rows are, below. Every writer locks a trigger's row before its queue row (the sync trigger in
    -- migration 0009 runs after the row's update), so locking the queue row first could deadlock with
    -- a cancel.
    picked AS (
      SELECT u.id, u.ord, s.keyed FROM alloc a JOIN st s ON s.id = a.id
       CROSS JOIN LATERAL unnest(s.due_ids[1:a.n]) WITH ORDINALITY AS u(id, ord)
    ),
    -- The tenant lock (statement 1) already keeps other claims away; SKIP LOCKED here keeps the claim
    -- from waiting on a row a pause, cancel or PATCH is changing — waiting there, in another order than
    -- theirs, could deadlock with them. = ANY(ARRAY(…)): a primary-key probe per row; joining picked
    -- (row count unknown) made the planner hash-join a scan. No status test: a queue row whose trigger
    -- is not pending (none should be) is found here too, and dropped below.
    locked AS (
      SELECT t.ctid, t.id, t.status FROM triggers t
       WHERE t.id = ANY (ARRAY(SELECT id FROM picked)) ${at("t")}
         FOR UPDATE SKIP LOCKED
    ),
    claimed AS (
      -- A HOT update: no index on triggers reads a column it changes (schema.ts, triggerQueue). By the
      -- row versions "locked" locked (a TID scan), which cannot move: this transaction holds them. A
      -- version locked after following a concurrent update is newer than this statement's snapshot
      -- and is simply not claimed (nor dequeued) this time.
      UPDATE triggers t
         SET status = 'running', standby = false, lease_owner = ${owner}, lease_token = ${leaseToken},
             lease_expires_at = now() + make_interval(secs => ${leaseMs}::float8 / 1000),
             attempt_count = t.attempt_count + 1, updated_at = now()
       WHERE t.ctid = ANY (ARRAY(SELECT ctid FROM locked WHERE status = 'pending')) ${at("t")}
      -- What the result below needs, not t.*: the CTE keeps every returned row for its readers.
      RETURNING t.id, t.tenant_id, t.job_id, t.kind, t.priority, t.scheduled_for, t.attempt_count, t.max_attempts, t.key
    ),
    -- The claimed rows leave the queue (their sync trigger does not fire for pending → running), and
    -- so does a row whose trigger had left pending. Rows skipped as locked stay.
    dequeued AS (
      DELETE FROM trigger_queue q
       WHERE q.id = ANY (ARRAY(SELECT id FROM claimed UNION ALL SELECT id FROM locked WHERE status <> 'pending')) ${at("q")}
      RETURNING q.tenant_id, q.key
    ),
    -- The claim's lease, for the reaper (schema.ts, leases).
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
    -- Lock order (no deadlocks): tenant_pools rows are locked in key order, here and in settle; the
    -- pool clock below never waits. So every lock wait in claim and settle is on tenant_pools in one
    -- global order, and no cycle can form.
    -- The charge is added to the row as it is now, not to the vtime this statement read: a settle may
    -- have corrected it since (it does not take the tenant lock), and writing back read value +
    -- charge dropped that correction (packages/store/test/ledger-race.pg.test.ts). A new row starts at
    -- the pool clock (its vstart); an existing one at max(its vtime now, the clock), so excluded.vtime
    -- minus the clock is this claim's charge.
    charge AS (${
      one
        ? // The tenant's row exists (oneTenantRows), in its defaults where it was new: the same charge.
          sql`
      UPDATE tenant_pools tp
         SET vtime = greatest(tp.vtime, (SELECT v FROM clock0)) + got.n * r.cost_ms / r.weight,
             running = tp.running + got.n
        FROM room r JOIN got ON got.tenant_id = r.id
       WHERE tp.tenant_id = ${tenantId} AND tp.type = ${type} AND r.id = ${tenantId}`
        : sql`
      INSERT INTO tenant_pools AS tp (tenant_id, type, vtime, cost_ms, running)
      SELECT r.id, ${type}, (SELECT v FROM clock0) + got.n * r.cost_ms / r.weight, r.cost_ms, got.n
        FROM room r JOIN got ON got.tenant_id = r.id
       ORDER BY r.id
      ON CONFLICT (tenant_id, type) DO UPDATE
        SET vtime = greatest(tp.vtime, (SELECT v FROM clock0)) + excluded.vtime - (SELECT v FROM clock0),
            running = tp.running + excluded.running`
    }
      RETURNING 1
    ),
    ${keyCharge(bound)},
    spend AS (
      UPDATE tenants t SET rate_tokens = r.tokens - coalesce(got.n, 0), rate_updated_at = now()
        FROM room r LEFT JOIN got ON got.tenant_id = r.id
       WHERE t.id = r.id AND r.tokens IS NOT NULL ${one ? sql`AND t.id = ${tenantId}` : sql``}
    )${
      // For one tenant the pool clock is left to the claimer (executor claimer.ts, advanceClocks): the
      // pools table is a reference table on a Citus cluster, and a write to it is a write on every node.
      one
        ? sql``
        : sql`,
    clock AS (
      -- SKIP LOCKED: if another claim holds the pool row it is advancing the clock itself.
      UPDATE pools SET vclock = sub.v
        FROM (SELECT min(r.vstart) AS v FROM room r JOIN got ON got.tenant_id = r.id) sub
       WHERE pools.type IN (SELECT p.type FROM pools p WHERE p.type = ${type} FOR UPDATE SKIP LOCKED)
         AND sub.v > pools.vclock
    )`
    }
    ${claimResult(true, tenantId)}`;
}

/** For one tenant, the rows a claim inserts are inserted by statements of their own before it (on a
 *  Citus cluster, a write inside a statement's CTE other than UPDATE or DELETE makes the statement
 *  leave its shard): the lease, without triggers, and the tenant's ledger row in the pool, in its
 *  defaults when it is new (vtime 0 starts at the pool clock, as a new row does in the claim). The
 *  claim then fills the lease, or deletes it when it claimed nothing (leaseOf). */
export function oneTenantRows(
  input: { type: string; owner: string; leaseMs: number },
  tenantId: string,
  leaseToken: string,
) {
  return [
    sql`INSERT INTO leases (token, tenant_id, owner, expires_at, trigger_ids)
        VALUES (${leaseToken}, ${tenantId}, ${input.owner}, now() + make_interval(secs => ${input.leaseMs}::float8 / 1000), '{}')`,
    sql`INSERT INTO tenant_pools (tenant_id, type) VALUES (${tenantId}, ${input.type}) ON CONFLICT DO NOTHING`,
  ];
}

/** The lease oneTenantRows() inserted: given the claimed triggers (CTE "claimed"), or deleted. */
export function leaseOf(tenantId: string, leaseToken: string): SQL {
  return sql`lease AS (
      UPDATE leases l SET trigger_ids = c.ids
        FROM (SELECT array_agg(id) AS ids FROM claimed) c
       WHERE l.tenant_id = ${tenantId} AND l.token = ${leaseToken} AND c.ids IS NOT NULL
    ),
    unlease AS (
      DELETE FROM leases l
       WHERE l.tenant_id = ${tenantId} AND l.token = ${leaseToken} AND NOT EXISTS (SELECT 1 FROM claimed)
    ),`;
}

/** The claim's WFQ slots for its locked tenants ("room"): each tenant's k-th at vstart + (k − 1) · cost ÷ weight. */
const OWN_SLOTS = sql`
      SELECT id, vt, false AS rival FROM (
        SELECT r.id, r.vstart + (g.k - 1) * r.cost_ms / r.weight AS vt
          FROM room r CROSS JOIN LATERAL generate_series(1, r.room) AS g(k)) own`;

/** For one tenant: its slots, the budget's first. */
const ownSlots = (budget: number) => sql`${OWN_SLOTS}
       ORDER BY vt, id
       LIMIT ${budget}`;

/** Across tenants: the budget's first slots among those of the locked tenants and of their rivals. */
function rivalSlots(type: string, budget: number): SQL {
  return sql`
    -- Rivals (statement 1): tenants another claim holds, with the slots they would take, as if
    -- backlogged, up to twice their weighted share of the budget. Read, not locked.
    rival AS (
      SELECT t.id, ${boundedWeight("t")} AS weight, coalesce(tp.cost_ms, 100) AS cost_ms,
             greatest(coalesce(tp.vtime, 0), (SELECT v FROM clock0)) AS vstart,
             t.max_in_flight - ${runningOf(sql`t.id`)} AS free
        FROM tenants t
        LEFT JOIN tenant_pools tp ON tp.tenant_id = t.id AND tp.type = ${type}
       WHERE t.id IN (SELECT jsonb_array_elements_text(current_setting('fairway.claim_rivals')::jsonb))
    ),
    rival_share AS (
      SELECT sum(w) AS total FROM (SELECT weight / cost_ms AS w FROM rival UNION ALL SELECT weight / cost_ms FROM cand) x
    ),
    slots AS (${OWN_SLOTS}
      UNION ALL
      SELECT v.id, v.vstart + (g.k - 1) * v.cost_ms / v.weight, true
        FROM rival v CROSS JOIN LATERAL generate_series(1, greatest(0, least(v.free, ${budget}::int,
               greatest(16, ceil(2.0 * ${budget}::int * (v.weight / v.cost_ms) / (SELECT total FROM rival_share))))::int)) AS g(k)
       ORDER BY vt, id
       LIMIT ${budget}
    ),`;
}

/** A tenant's first due queue rows in claim order, up to `limit` (an array of trigger ids). One index
 *  scan per tenant, not one to count and another to pick: each walks over the queue rows claims have
 *  deleted at the front of the tenant's range until a vacuum removes them. Rows held back by overlap
 *  do not count as due: they would take slots the claim then left empty (claim-due.pg.test.ts). */
function dueIds(type: string, tenantId: SQL, limit: SQL, one?: SQL): SQL {
  return sql`ARRAY(SELECT x.id FROM trigger_queue x
                    WHERE x.tenant_id = ${tenantId} AND x.type = ${type} AND x.next_attempt_at <= now()
                      AND ${exclusiveFree(sql`x`, one)}
                    -- NULLS LAST matches trigger_queue_claim_idx (priority is NOT NULL, so the order is the
                    -- same): with the default NULLS FIRST the planner sorted a tenant's whole backlog.
                    ORDER BY x.priority DESC NULLS LAST, x.next_attempt_at
                    LIMIT ${limit})`;
}

/** The claim's answer, read from its CTEs `claimed` (the claimed rows), `got` (per tenant how many),
 *  `room` (per tenant: id, free, vstart, cost_ms, weight) and `clock0` (the pool clock). `tenantId`:
 *  every row claimed is this tenant's, and its tables are read at it. */
export function claimResult(keyed = false, tenantId?: string): SQL {
  const { at } = scopeOf(tenantId === undefined ? undefined : sql`${tenantId}`);
  return sql`
    -- One row: the triggers as packed text (packed.ts: cheaper for Postgres than json_build_array per
    -- row), and each claimed job's and tenant's data once as JSON (not once per trigger; names, targets
    -- and payloads are free-form). The pool type is the caller's: not sent back.
    SELECT (SELECT ${packRows(sql`c.id, c.tenant_id, c.job_id, c.kind, c.priority,
                                   extract(epoch FROM c.scheduled_for) * 1000, c.attempt_count, c.max_attempts`)}
              FROM claimed c) AS triggers,
           (SELECT json_object_agg(j.id, json_build_array(j.name, j.target, j.payload, j.timeout_ms,
                                                          j.initial_delay_ms, j.max_delay_ms, j.backoff, j.jitter, j.delivery,
                                                          j.failure_streak > 0, j.tags,
                                                          CASE WHEN j.traceparent IS NOT NULL
                                                               THEN json_build_array(j.traceparent, j.tracestate, j.cron IS NULL) END))
              FROM jobs j WHERE j.id IN (SELECT job_id FROM claimed) ${at("j")}) AS jobs,
           (SELECT json_object_agg(tn.id, array_remove(ARRAY[tn.signing_secret,
                     CASE WHEN tn.previous_secret_expires_at > now() THEN tn.previous_signing_secret END], NULL))
              FROM tenants tn WHERE tn.id IN (SELECT tenant_id FROM got) ${tenantId === undefined ? sql`` : sql`AND tn.id = ${tenantId}`}) AS secrets,
           -- Tenants this claim took to their cap (ClaimedTrigger.atCap).
           (SELECT json_agg(r.id) FROM room r JOIN got ON got.tenant_id = r.id WHERE got.n >= r.free) AS at_cap,
           -- Each claimed tenant's first slot and the step between its slots, and the clock (ClaimedTrigger.vt).
           (SELECT json_object_agg(r.id, json_build_array(r.vstart, r.cost_ms / r.weight))
              FROM room r JOIN got ON got.tenant_id = r.id) AS slots,
           (SELECT v FROM clock0) AS vclock,
           -- The claimed triggers' fairness keys (JSON: a key is free-form), only those with one.
           (SELECT json_object_agg(c.id, c.key) FROM claimed c WHERE c.key IS NOT NULL) AS keys
           ${keyed ? keyResult() : sql``}`;
}

type Json<T> = T | string;
type JobTuple = [
  string,
  ClaimedTrigger["target"],
  unknown,
  number | null,
  number,
  number,
  ClaimedTrigger["backoff"],
  ClaimedTrigger["jitter"],
  ClaimedTrigger["delivery"],
  boolean,
  Record<string, string> | null,
  [parent: string, state: string | null, join: boolean] | null,
];
interface ClaimResult {
  triggers: string | null;
  jobs: Json<Record<string, JobTuple>> | null;
  secrets: Json<Record<string, string[]>> | null;
  at_cap: Json<string[]> | null;
  slots: Json<Record<string, Slots>> | null;
  vclock: number | string;
  keys: Json<Record<string, string>> | null;
  key_ord?: Json<Record<string, number | string>> | null;
  key_cap?: Json<Array<[string, string, boolean]>> | null;
}

/** A tenant's WFQ slots in a claim: the first one's virtual start, and the step between them. */
export type Slots = [vstart: number, step: number];

export function decodeClaim(
  r: ClaimResult,
  type: string,
  leaseToken: string,
): {
  claimed: ClaimedTrigger[];
  slots: Record<string, Slots>;
  vclock: number;
  /** A keyed tenant's triggers by id: their rank in its key-slot order (fairOrder), or null. */
  ord: Map<string, number> | null;
  /** The triggers of capped keys, by id (capsFirst). */
  capped: Set<string>;
} {
  const jobs = r.jobs == null ? {} : jsonColumn(r.jobs);
  const secrets = r.secrets == null ? {} : jsonColumn(r.secrets);
  const atCap = new Set(r.at_cap == null ? [] : jsonColumn(r.at_cap));
  const keys = r.keys == null ? {} : jsonColumn(r.keys);
  const keyOrd = r.key_ord == null ? null : jsonColumn(r.key_ord);
  // "tenant\u0000key": neither holds a NUL (printable checks).
  const capRows = r.key_cap == null ? [] : jsonColumn(r.key_cap);
  const keyCap = new Set(capRows.filter((c) => c[2]).map(([t, k]) => `${t}\u0000${k}`));
  const cappedKeys = new Set(capRows.map(([t, k]) => `${t}\u0000${k}`));
  const capped = new Set<string>();
  // Every claimed trigger is built with ClaimedTrigger's fields alone, in one order, and none is
  // added or deleted later: the executor reads these objects on every start and settle, and one
  // whose shape changed after it was built is read through a slow dictionary lookup (V8).
  const claimed = unpackRows(r.triggers, 8).map(
    ([id, tenantId, jobId, kind, priority, scheduledMs, attempt, maxAttempts]): ClaimedTrigger => {
      const j = jobs[jobId];
      if (keys[id] !== undefined && cappedKeys.has(`${tenantId}\u0000${keys[id]}`)) capped.add(id);
      return {
        id,
        tenantId,
        jobId,
        type,
        kind,
        priority: Number(priority),
        scheduledFor: new Date(Number(scheduledMs)),
        attempt: Number(attempt),
        maxAttempts: Number(maxAttempts),
        leaseToken,
        jobName: j[0],
        target: j[1],
        payload: j[2],
        timeoutMs: j[3],
        initialDelayMs: j[4],
        maxDelayMs: j[5],
        backoff: j[6],
        jitter: j[7],
        delivery: j[8],
        failing: j[9],
        tags: j[10] ?? null,
        secrets: secrets[tenantId] ?? [],
        atCap: atCap.has(tenantId) || (keys[id] !== undefined && keyCap.has(`${tenantId}\u0000${keys[id]}`)),
        vt: 0, // fairOrder()
        vclock: null,
        key: keys[id] ?? null,
        trace: j[11] ? { parent: j[11][0], state: j[11][1], join: j[11][2] } : null,
      };
    },
  );
  const ord = keyOrd == null ? null : new Map(Object.entries(keyOrd).map(([id, o]) => [id, Number(o)]));
  return { claimed, slots: r.slots == null ? {} : jsonColumn(r.slots), vclock: Number(r.vclock), ord, capped };
}

/** Tenants with due work in the pool, the longest due first, at most `limit`: where a claim across
 *  tenants finds them itself (candidateScan), a claimer that claims per tenant asks first (executor
 *  claimer.ts, on a Citus cluster without a ready index). No locks. On a cluster it reads every shard
 *  (a task per shard): a ready index answers the same without touching Postgres. */
export async function dueTenants(db: Db, type: string, limit: number): Promise<string[]> {
  const rows = await query<{ tenant_id: string }>(
    db,
    sql`SELECT tenant_id FROM trigger_queue WHERE type = ${type} AND next_attempt_at <= now()
         GROUP BY tenant_id ORDER BY min(next_attempt_at), tenant_id LIMIT ${limit}`,
  );
  return rows.map((r) => r.tenant_id);
}

/** The pool clock moved on to `v`, never back: what a claim across tenants does in its statement (CTE
 *  "clock"), for the claims of one tenant, which leave it out (claimLockedSql). */
export async function advancePoolClock(db: Db, type: string, v: number): Promise<void> {
  await query(db, sql`UPDATE pools SET vclock = ${v} WHERE type = ${type} AND vclock < ${v}`);
}

export interface ClaimReport {
  claimed: ClaimedTrigger[];
  /** Candidates that were due and under their cap but locked by another claim (at most as many as a
   *  claim locks). */
  busy: string[];
}

/** claim() as its statements, and which of the given candidates another claim held. Callers go
 *  through claimReport() (delegated.ts), which sends one tenant's claim as one call instead. */
export async function claimByStatements(db: Db, input: ClaimInput): Promise<ClaimReport> {
  if (input.budget <= 0) return { claimed: [], busy: [] };
  const c = claimStatements(input);
  return c.decode(await pipelineTx(db, c.statements));
}

/** The claim's two statements, to run in this order in one transaction (after others, store
 *  hand-off.ts), and the decoding of their rows. */
export function claimStatements(input: ClaimInput) {
  // One lease token per claim: the fence is (trigger, token, attempt), and a trigger is claimed at most
  // once per claim, so a token unique to the claim fences as well as one per row (without a UUID made
  // and sent back per row).
  const leaseToken = input.leaseToken ?? crypto.randomUUID();
  const rows = input.tenantId === undefined ? [] : oneTenantRows(input, input.tenantId, leaseToken);
  return {
    statements: [lockCandidatesSql(input), ...rows, claimLockedSql(input, leaseToken)],
    /** From the rows of each of the statements, in order. */
    decode(results: unknown[][]): ClaimReport {
      const lockRows = results[0];
      const claimRows = results[results.length - 1];
      const busy = (lockRows as Array<{ busy: Json<string[]> | null }>)[0]?.busy;
      const { claimed, slots, vclock, ord, capped } = decodeClaim(
        (claimRows as ClaimResult[])[0],
        input.type,
        leaseToken,
      );
      return {
        claimed: capsFirst(fairOrder(claimed, slots, vclock, ord), capped),
        busy: busy == null ? [] : jsonColumn(busy),
      };
    },
  };
}

/** The claimed triggers in the order of their WFQ slots, each given its slot (`vt`, and `vclock` where its
 *  tenant started at the pool clock `clock`): a tenant's k-th trigger, highest priority first and then
 *  in the claim's order, takes its k-th slot, vstart + (k − 1) · step. Started tenant by tenant (the order
 *  the UPDATE returns them), a claim would run one tenant's block after another's, and any window's
 *  share would be off by up to a block. The pool goes on to order its whole queue by slot (pool.ts), so
 *  that slots from different claims interleave too. Sorted here, not in SQL, where an ORDER BY over the
 *  wide claimed rows is costly. A tenant missing from `slots` (none should be) sorts last. `ord`: a
 *  keyed tenant's triggers' ranks in its key-slot order (claimResult's key_ord), by id. */
export function fairOrder<
  T extends { id: string; tenantId: string; priority: number; vt: number; vclock: number | null },
>(rows: T[], slots: Record<string, Slots>, clock: number, ord: ReadonlyMap<string, number> | null = null): T[] {
  const byTenant = new Map<string, T[]>();
  for (const r of rows) {
    const list = byTenant.get(r.tenantId);
    if (list) list.push(r);
    else byTenant.set(r.tenantId, [r]);
  }
  const keyed: Array<{ r: T; k: number }> = [];
  for (const [tenantId, list] of byTenant) {
    // A keyed tenant's in its key-slot order (claimResult's key_ord); any other's highest priority first,
    // stable: the claim's order within a priority.
    list.sort((a, b) => {
      const oa = ord?.get(a.id);
      const ob = ord?.get(b.id);
      return oa !== undefined && ob !== undefined ? oa - ob : b.priority - a.priority;
    });
    const [vstart, step] = slots[tenantId] ?? [Infinity, 0];
    const vclock = vstart <= clock ? clock : null;
    list.forEach((r, k) => {
      r.vt = vstart + k * step;
      r.vclock = vclock;
      keyed.push({ r, k });
    });
  }
  // Equal slots in the order the claim's allocation breaks ties: by tenant, then slot.
  keyed.sort(
    (a, b) => a.r.vt - b.r.vt || (a.r.tenantId < b.r.tenantId ? -1 : a.r.tenantId > b.r.tenantId ? 1 : a.k - b.k),
  );
  return keyed.map((x) => x.r);
}
