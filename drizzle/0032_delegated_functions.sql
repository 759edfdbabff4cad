-- Hand-written: the delegated functions (packages/store/src/sql/delegated.ts, whose text this must be:
-- packages/store/test/functions.pg.test.ts): one tenant's claim and settle, each as one call.
CREATE OR REPLACE FUNCTION fairway_claim(p_tenant text, p_type text, p_budget integer, p_owner text,
  p_lease_ms double precision, p_token text) RETURNS json
 LANGUAGE plpgsql AS $fn$
DECLARE v_lock record; v_claim record;
BEGIN

    WITH eligible AS MATERIALIZED (
      SELECT t.id FROM tenants t
       WHERE t.id = p_tenant AND t.status = 'active'
         AND EXISTS (SELECT 1 FROM trigger_queue d
                      WHERE d.tenant_id = p_tenant AND d.type = p_type AND d.next_attempt_at <= now())
         AND NOT EXISTS (SELECT 1 FROM pools p WHERE p.type = p_type AND p.paused)
         AND (SELECT coalesce(sum(r.running), 0) FROM tenant_pools r WHERE r.tenant_id = p_tenant) < t.max_in_flight
    ),
    locked AS (
      SELECT t.id FROM tenants t
       WHERE t.id = p_tenant AND t.id IN (SELECT id FROM eligible)
         FOR NO KEY UPDATE OF t SKIP LOCKED
    )
    SELECT set_config('fairway.claim_tenants', coalesce(jsonb_agg(id), '[]'::jsonb)::text, true) AS ids,
           (SELECT coalesce(jsonb_agg(e.id), '[]'::jsonb) FROM eligible e WHERE e.id NOT IN (SELECT id FROM locked)) AS busy,
           set_config('plan_cache_mode', 'auto', true) AS plan
      FROM locked
  INTO v_lock;
INSERT INTO leases (token, tenant_id, owner, expires_at, trigger_ids)
        VALUES (p_token, p_tenant, p_owner, now() + make_interval(secs => p_lease_ms::float8 / 1000), '{}');
INSERT INTO tenant_pools (tenant_id, type) VALUES (p_tenant, p_type) ON CONFLICT DO NOTHING;

    WITH ids AS (SELECT t0.id FROM tenants t0 WHERE t0.id = p_tenant AND current_setting('fairway.claim_tenants' || left(t0.id, 0))::jsonb ? t0.id),
    -- The candidates with their ledger rows, and each one's weighted share of this claim, for
    -- dueScanCap() below (the candidates are known only here when statement 1 was pipelined).
    cand AS (
      SELECT t.id, greatest(0.01, least(1000, t.weight)) AS weight, t.max_in_flight, CASE WHEN t.rate_per_second IS NULL THEN NULL ELSE greatest(0.01, least(100000, t.rate_per_second)) END AS rate_per_second,
             t.burst, t.rate_tokens, t.rate_updated_at,
             coalesce(tp.vtime, 0) AS vtime,
             coalesce(tp.cost_ms, 100) AS cost_ms,
             (greatest(0.01, least(1000, t.weight)) / coalesce(tp.cost_ms, 100))
               / sum(greatest(0.01, least(1000, t.weight)) / coalesce(tp.cost_ms, 100)) OVER () AS share,
             t.key_max_in_flight, t.key_rate_per_second, t.key_weight,
             -- Keyed work queued (one probe of tenant_keys_due_idx): its slots go by key (keyedIds).
             EXISTS (SELECT 1 FROM tenant_keys k WHERE k.tenant_id = p_tenant AND k.queued > 0) AS keyed
        FROM tenants t
        LEFT JOIN tenant_pools tp ON tp.tenant_id = t.id AND tp.type = p_type AND tp.tenant_id = p_tenant
       WHERE t.id IN (SELECT id FROM ids) AND t.status = 'active' AND t.id = p_tenant
    ),
    st AS (
      SELECT c.id, c.weight, c.max_in_flight, c.vtime, c.cost_ms, c.keyed,
             CASE WHEN c.rate_per_second IS NULL THEN NULL ELSE
               least(coalesce(c.burst, greatest(1, ceil(c.rate_per_second)))::float8,
                     coalesce(c.rate_tokens, coalesce(c.burst, greatest(1, ceil(c.rate_per_second)))::float8)
                     + extract(epoch FROM now() - coalesce(c.rate_updated_at, now())) * c.rate_per_second)
             END AS tokens,
             (SELECT coalesce(sum(r.running), 0) FROM tenant_pools r WHERE r.tenant_id = p_tenant) AS running,
             -- The tenant's first due queue rows (dueIds), up to dueScanCap(): how many it has due, and
             -- which "picked" takes.
             CASE WHEN c.keyed THEN ARRAY(
    WITH kk AS (
      SELECT k.key, k.vtime + k.vcorr AS vtime, c.cost_ms / p.weight AS step, d.ids
        FROM tenant_keys k
       CROSS JOIN LATERAL (
    SELECT p0.cap, p0.weight, p0.rate,
           CASE WHEN p0.rate IS NULL THEN NULL ELSE
             least(greatest(1, ceil(p0.rate))::float8,
                   coalesce(k.rate_tokens, greatest(1, ceil(p0.rate))::float8)
                   + extract(epoch FROM now() - coalesce(k.rate_updated_at, now())) * p0.rate)
           END AS tokens
      FROM (SELECT CASE WHEN k.override ? 'maxInFlight' THEN (k.override->>'maxInFlight')::int
                        ELSE c.key_max_in_flight END AS cap,
                   greatest(0.01, least(1000, coalesce((k.override->>'weight')::float8, c.key_weight))) AS weight,
                   CASE WHEN (CASE WHEN k.override ? 'ratePerSecond' THEN (k.override->>'ratePerSecond')::float8
                        ELSE c.key_rate_per_second END) IS NULL THEN NULL ELSE greatest(0.01, least(100000, CASE WHEN k.override ? 'ratePerSecond' THEN (k.override->>'ratePerSecond')::float8
                        ELSE c.key_rate_per_second END)) END AS rate) p0) p
       CROSS JOIN LATERAL (SELECT ARRAY(
               SELECT x.id FROM trigger_queue x
                WHERE x.tenant_id = p_tenant AND x.type = p_type AND x.key = k.key AND x.next_attempt_at <= now()
                  AND (NOT x.exclusive OR (
              NOT EXISTS (SELECT 1 FROM triggers o WHERE o.job_id = x.job_id AND o.status = 'running' AND o.tenant_id = p_tenant)
              AND x.id = (SELECT f.id FROM trigger_queue f
                              WHERE f.tenant_id = p_tenant AND f.type = x.type AND f.job_id = x.job_id
                                AND f.exclusive AND f.next_attempt_at <= now()
                              ORDER BY f.priority DESC, f.next_attempt_at, f.id
                              LIMIT 1)))
                ORDER BY x.priority DESC NULLS LAST, x.next_attempt_at
                LIMIT greatest(0, least(least(p_budget::int, greatest(16, ceil(2.0 * p_budget::int * c.share)))::int, coalesce(p.cap - k.running, least(p_budget::int, greatest(16, ceil(2.0 * p_budget::int * c.share)))::int),
                                        coalesce(floor(p.tokens)::int, least(p_budget::int, greatest(16, ceil(2.0 * p_budget::int * c.share)))::int)))) AS ids
               -- Not pulled up: the array is built once per key, not once per reference to it.
               OFFSET 0) d
       WHERE k.tenant_id = c.id AND k.tenant_id = p_tenant AND k.queued > 0 AND cardinality(d.ids) > 0
       ORDER BY k.vtime, k.key
       LIMIT least(p_budget::int, greatest(16, ceil(2.0 * p_budget::int * c.share)))::int
    ),
    bare AS (
      SELECT y.id, row_number() OVER () AS n FROM (
        SELECT x.id, x.key FROM trigger_queue x
         WHERE x.tenant_id = p_tenant AND x.type = p_type AND x.next_attempt_at <= now()
           AND (NOT x.exclusive OR (
              NOT EXISTS (SELECT 1 FROM triggers o WHERE o.job_id = x.job_id AND o.status = 'running' AND o.tenant_id = p_tenant)
              AND x.id = (SELECT f.id FROM trigger_queue f
                              WHERE f.tenant_id = p_tenant AND f.type = x.type AND f.job_id = x.job_id
                                AND f.exclusive AND f.next_attempt_at <= now()
                              ORDER BY f.priority DESC, f.next_attempt_at, f.id
                              LIMIT 1)))
         ORDER BY x.priority DESC NULLS LAST, x.next_attempt_at
         LIMIT least(p_budget::int, greatest(16, ceil(2.0 * p_budget::int * c.share)))::int) y
       WHERE y.key IS NULL
    )
    SELECT s.id FROM (
      SELECT kk.ids[g.k] AS id, kk.vtime + (g.k - 1) * kk.step AS vt, kk.key, g.k
        FROM kk CROSS JOIN LATERAL generate_series(1, cardinality(kk.ids)) AS g(k)
      UNION ALL
      SELECT bare.id, coalesce((SELECT min(vtime) FROM kk), 0) + (bare.n - 1) * c.cost_ms / greatest(0.01, least(1000, c.key_weight)), '', bare.n
        FROM bare
    ) s
    ORDER BY s.vt, s.key, s.k
    LIMIT least(p_budget::int, greatest(16, ceil(2.0 * p_budget::int * c.share)))::int)
                  ELSE ARRAY(SELECT x.id FROM trigger_queue x
                    WHERE x.tenant_id = p_tenant AND x.type = p_type AND x.next_attempt_at <= now()
                      AND (NOT x.exclusive OR (
              NOT EXISTS (SELECT 1 FROM triggers o WHERE o.job_id = x.job_id AND o.status = 'running' AND o.tenant_id = p_tenant)
              AND x.id = (SELECT f.id FROM trigger_queue f
                              WHERE f.tenant_id = p_tenant AND f.type = x.type AND f.job_id = x.job_id
                                AND f.exclusive AND f.next_attempt_at <= now()
                              ORDER BY f.priority DESC, f.next_attempt_at, f.id
                              LIMIT 1)))
                    -- NULLS LAST matches trigger_queue_claim_idx (priority is NOT NULL, so the order is the
                    -- same): with the default NULLS FIRST the planner sorted a tenant's whole backlog.
                    ORDER BY x.priority DESC NULLS LAST, x.next_attempt_at
                    LIMIT least(p_budget::int, greatest(16, ceil(2.0 * p_budget::int * c.share)))::int)
             END AS due_ids
        FROM cand c
    ),
    -- The pool clock as this statement found it: where a tenant back from idle starts.
    clock0 AS (SELECT coalesce((SELECT vclock FROM pools WHERE type = p_type), 0) AS v),
    room AS (
      SELECT id, weight, cost_ms, tokens, max_in_flight - running AS free,
             greatest(vtime, (SELECT v FROM clock0)) AS vstart,
             greatest(0, least(max_in_flight - running, cardinality(due_ids),
                               coalesce(floor(tokens)::bigint, p_budget::bigint)))::int AS room
        FROM st
    ),
    slots AS (
      SELECT id, vt, false AS rival FROM (
        SELECT r.id, r.vstart + (g.k - 1) * r.cost_ms / r.weight AS vt
          FROM room r CROSS JOIN LATERAL generate_series(1, r.room) AS g(k)) own
       ORDER BY vt, id
       LIMIT p_budget),
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
       WHERE t.id = ANY (ARRAY(SELECT id FROM picked)) AND t.tenant_id = p_tenant
         FOR UPDATE SKIP LOCKED
    ),
    claimed AS (
      -- A HOT update: no index on triggers reads a column it changes (schema.ts, triggerQueue). By the
      -- row versions "locked" locked (a TID scan), which cannot move: this transaction holds them. A
      -- version locked after following a concurrent update is newer than this statement's snapshot
      -- and is simply not claimed (nor dequeued) this time.
      UPDATE triggers t
         SET status = 'running', standby = false, lease_owner = p_owner, lease_token = p_token,
             lease_expires_at = now() + make_interval(secs => p_lease_ms::float8 / 1000),
             attempt_count = t.attempt_count + 1, updated_at = now()
       WHERE t.ctid = ANY (ARRAY(SELECT ctid FROM locked WHERE status = 'pending')) AND t.tenant_id = p_tenant
      -- What the result below needs, not t.*: the CTE keeps every returned row for its readers.
      RETURNING t.id, t.tenant_id, t.job_id, t.kind, t.priority, t.scheduled_for, t.attempt_count, t.max_attempts, t.key
    ),
    -- The claimed rows leave the queue (their sync trigger does not fire for pending → running), and
    -- so does a row whose trigger had left pending. Rows skipped as locked stay.
    dequeued AS (
      DELETE FROM trigger_queue q
       WHERE q.id = ANY (ARRAY(SELECT id FROM claimed UNION ALL SELECT id FROM locked WHERE status <> 'pending')) AND q.tenant_id = p_tenant
      RETURNING q.tenant_id, q.key
    ),
    -- The claim's lease, for the reaper (schema.ts, leases).
    lease AS (
      UPDATE leases l SET trigger_ids = c.ids
        FROM (SELECT array_agg(id) AS ids FROM claimed) c
       WHERE l.tenant_id = p_tenant AND l.token = p_token AND c.ids IS NOT NULL
    ),
    unlease AS (
      DELETE FROM leases l
       WHERE l.tenant_id = p_tenant AND l.token = p_token AND NOT EXISTS (SELECT 1 FROM claimed)
    ),
    got AS (SELECT tenant_id, count(*)::int AS n FROM claimed GROUP BY tenant_id),
    -- Lock order (no deadlocks): tenant_pools rows are locked in key order, here and in settle; the
    -- pool clock below never waits. So every lock wait in claim and settle is on tenant_pools in one
    -- global order, and no cycle can form.
    -- The charge is added to the row as it is now, not to the vtime this statement read: a settle may
    -- have corrected it since (it does not take the tenant lock), and writing back read value +
    -- charge dropped that correction (packages/store/test/ledger-race.pg.test.ts). A new row starts at
    -- the pool clock (its vstart); an existing one at max(its vtime now, the clock), so excluded.vtime
    -- minus the clock is this claim's charge.
    charge AS (
      UPDATE tenant_pools tp
         SET vtime = greatest(tp.vtime, (SELECT v FROM clock0)) + got.n * r.cost_ms / r.weight,
             running = tp.running + got.n
        FROM room r JOIN got ON got.tenant_id = r.id
       WHERE tp.tenant_id = p_tenant AND tp.type = p_type AND r.id = p_tenant
      RETURNING 1
    ),
    
    kdq AS (SELECT tenant_id, key, count(*)::int AS n FROM dequeued WHERE key IS NOT NULL GROUP BY 1, 2),
    kgot AS (SELECT tenant_id, key, count(*)::int AS n FROM claimed WHERE key IS NOT NULL GROUP BY 1, 2),
    klocked AS MATERIALIZED (
      SELECT k.tenant_id, k.key, k.running, d.n AS dq, coalesce(g.n, 0) AS n, p.cap, p.weight, p.tokens,
             c.cost_ms, now() AS now
        FROM tenant_keys k
        JOIN kdq d ON d.tenant_id = k.tenant_id AND d.key = k.key
        LEFT JOIN kgot g ON g.tenant_id = k.tenant_id AND g.key = k.key
        JOIN cand c ON c.id = k.tenant_id
       CROSS JOIN LATERAL (
    SELECT p0.cap, p0.weight, p0.rate,
           CASE WHEN p0.rate IS NULL THEN NULL ELSE
             least(greatest(1, ceil(p0.rate))::float8,
                   coalesce(k.rate_tokens, greatest(1, ceil(p0.rate))::float8)
                   + extract(epoch FROM now() - coalesce(k.rate_updated_at, now())) * p0.rate)
           END AS tokens
      FROM (SELECT CASE WHEN k.override ? 'maxInFlight' THEN (k.override->>'maxInFlight')::int
                        ELSE c.key_max_in_flight END AS cap,
                   greatest(0.01, least(1000, coalesce((k.override->>'weight')::float8, c.key_weight))) AS weight,
                   CASE WHEN (CASE WHEN k.override ? 'ratePerSecond' THEN (k.override->>'ratePerSecond')::float8
                        ELSE c.key_rate_per_second END) IS NULL THEN NULL ELSE greatest(0.01, least(100000, CASE WHEN k.override ? 'ratePerSecond' THEN (k.override->>'ratePerSecond')::float8
                        ELSE c.key_rate_per_second END)) END AS rate) p0) p
       -- After the tenants' ledger rows ("charge"): tenant_pools, then tenant_keys, as settle locks them.
       WHERE (SELECT count(*) FROM charge) >= 0 AND k.tenant_id = p_tenant
       ORDER BY k.tenant_id, k.key
         FOR UPDATE OF k
    ),
    kcharge AS (
      UPDATE tenant_keys k
         SET queued = k.queued - l.dq, running = k.running + l.n,
             vtime = k.vtime + k.vcorr + l.n * l.cost_ms / l.weight, vcorr = 0,
             rate_tokens = CASE WHEN l.tokens IS NULL OR l.n = 0 THEN k.rate_tokens ELSE l.tokens - l.n END,
             rate_updated_at = CASE WHEN l.tokens IS NULL OR l.n = 0 THEN k.rate_updated_at ELSE l.now END
        FROM klocked l
       WHERE k.tenant_id = l.tenant_id AND k.key = l.key AND k.tenant_id = p_tenant
    ),
    spend AS (
      UPDATE tenants t SET rate_tokens = r.tokens - coalesce(got.n, 0), rate_updated_at = now()
        FROM room r LEFT JOIN got ON got.tenant_id = r.id
       WHERE t.id = r.id AND r.tokens IS NOT NULL AND t.id = p_tenant
    )
    
    -- One row: the triggers as packed text (packed.ts: cheaper for Postgres than json_build_array per
    -- row), and each claimed job's and tenant's data once as JSON (not once per trigger; names, targets
    -- and payloads are free-form). The pool type is the caller's: not sent back.
    SELECT (SELECT coalesce(string_agg(concat_ws(chr(31), c.id, c.tenant_id, c.job_id, c.kind, c.priority,
                                   extract(epoch FROM c.scheduled_for) * 1000, c.attempt_count, c.max_attempts), chr(30)), '')
              FROM claimed c) AS triggers,
           (SELECT json_object_agg(j.id, json_build_array(j.name, j.target, j.payload, j.timeout_ms,
                                                          j.initial_delay_ms, j.max_delay_ms, j.backoff, j.jitter, j.delivery,
                                                          j.failure_streak > 0, j.tags,
                                                          CASE WHEN j.traceparent IS NOT NULL
                                                               THEN json_build_array(j.traceparent, j.tracestate, j.cron IS NULL) END))
              FROM jobs j WHERE j.id IN (SELECT job_id FROM claimed) AND j.tenant_id = p_tenant) AS jobs,
           (SELECT json_object_agg(tn.id, array_remove(ARRAY[tn.signing_secret,
                     CASE WHEN tn.previous_secret_expires_at > now() THEN tn.previous_signing_secret END], NULL))
              FROM tenants tn WHERE tn.id IN (SELECT tenant_id FROM got) AND tn.id = p_tenant) AS secrets,
           -- Tenants this claim took to their cap (ClaimedTrigger.atCap).
           (SELECT json_agg(r.id) FROM room r JOIN got ON got.tenant_id = r.id WHERE got.n >= r.free) AS at_cap,
           -- Each claimed tenant's first slot and the step between its slots, and the clock (ClaimedTrigger.vt).
           (SELECT json_object_agg(r.id, json_build_array(r.vstart, r.cost_ms / r.weight))
              FROM room r JOIN got ON got.tenant_id = r.id) AS slots,
           (SELECT v FROM clock0) AS vclock,
           -- The claimed triggers' fairness keys (JSON: a key is free-form), only those with one.
           (SELECT json_object_agg(c.id, c.key) FROM claimed c WHERE c.key IS NOT NULL) AS keys
           ,
           -- A keyed tenant's triggers: their rank in its key-slot order (keyedIds), which fairOrder()
           -- keeps within the tenant; and the keys this claim took to their cap (ClaimedTrigger.atCap).
           (SELECT json_object_agg(p.id, p.ord) FROM picked p WHERE p.keyed) AS key_ord,
           -- The capped keys this claim took work of, and whether it took them to their cap.
           (SELECT json_agg(json_build_array(l.tenant_id, l.key, l.running + l.n >= l.cap)) FROM klocked l
             WHERE l.n > 0 AND l.cap IS NOT NULL) AS key_cap
  INTO v_claim;
  RETURN json_build_object('busy', v_lock.busy, 'claim', to_json(v_claim));
END $fn$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION fairway_settle(p_tenant text, p_input jsonb, p_ids text[], p_successors jsonb,
  p_log boolean, p_detail boolean) RETURNS text
 LANGUAGE plpgsql AS $fn$
DECLARE v_settled text;
BEGIN

    WITH 
    done AS (
      UPDATE triggers t
         SET status = i.status,
             next_attempt_at = coalesce(i.next_attempt_at, t.next_attempt_at),
             reason = i.reason,
             lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
             finished_at = CASE WHEN i.status IN ('succeeded', 'dead', 'unknown') THEN i.now END,
             updated_at = now(),
             -- A first attempt that succeeded: recorded here, in the version this update writes anyway,
             -- instead of as an attempt_log row and its index entry (schema.ts, okStartedAt). Any other
             -- attempt leaves these NULL and goes to attempt_log.
             ok_started_at = CASE WHEN i.ok THEN i.started_at END,
             ok_duration_ms = CASE WHEN i.ok THEN round(i.duration_ms)::int END,
             ok_http_status = CASE WHEN i.ok THEN i.http_status END,
             ok_response_body = CASE WHEN i.ok THEN i.response_body END
        FROM (
      SELECT x->>0 AS id, x->>1 AS token, (x->>2)::int AS attempt, x->>3 AS status,
             to_timestamp((x->>4)::float8 / 1000) AS started_at, (x->>5)::float8 AS duration_ms,
             x->>6 AS outcome, to_timestamp((x->>7)::float8 / 1000) AS next_attempt_at, x->>8 AS reason,
             (x->>9)::int AS http_status, x->>10 AS error, x->>11 AS response_body,
             (x->>12)::boolean AS pause_job, (x->>13)::boolean AS reap, x->>14 AS detail,
             -- Recorded in the trigger's row (the attempts view spells it out as outcome "success", no error).
             coalesce(x->>3 = 'succeeded' AND (x->>2)::int = 1 AND x->>6 = 'success' AND x->>10 IS NULL, false) AS ok,
             -- Read once here: Citus refuses now() inside a CASE of an update of a distributed table.
             now() AS now
        FROM jsonb_array_elements(p_input::jsonb) AS x) i
       -- A HOT update (schema.ts, triggerQueue): no index reads a column it changes. A retry (status
       -- pending) goes back into the queue through the sync trigger of migration 0009.
       -- = ANY(ids) makes the planner probe the primary key per settled id. Joining the input alone
       -- (estimated 100 rows; running rows' statistics are always stale) made it hash-join a scan of
       -- every running trigger, thousands of rows read to settle a few hundred.
       WHERE t.id = ANY (p_ids::text[]) AND t.id = i.id AND t.lease_token = i.token
         AND t.status = 'running'
         AND t.attempt_count = i.attempt
         AND (i.reap IS NOT TRUE OR t.lease_expires_at <= now()) AND t.tenant_id = p_tenant
      -- The settlement's own fields come back with the row: nothing below joins "input" again.
      -- standby is not written here: what it returns is whether the row was counted as running.
      RETURNING t.id, t.tenant_id, t.job_id, t.type, t.kind, t.status, t.standby, t.key, i.attempt, i.started_at,
                i.duration_ms, i.outcome, i.http_status, i.error, i.response_body, i.detail, i.pause_job, i.ok
    ),
    -- Standby triggers (standby.ts) that took a finished run's slot: counted from now on. Fenced by
    -- their lease like the rows above; one settled in this same statement stays uncounted (it ran and
    -- ended without ever being counted).
    moved AS (
      UPDATE triggers t SET standby = false
        FROM (SELECT x->>0 AS id, x->>1 AS token, (x->>2)::int AS attempt
                FROM jsonb_array_elements(p_successors::jsonb) AS x) m
       WHERE t.id = ANY (ARRAY(SELECT x->>0 FROM jsonb_array_elements(p_successors::jsonb) AS x)) AND t.id = m.id
         AND t.lease_token = m.token AND t.attempt_count = m.attempt AND t.status = 'running' AND t.standby
         AND NOT (t.id = ANY (p_ids::text[])) AND t.tenant_id = p_tenant
      RETURNING t.tenant_id, t.type
    ),

    
    job_end AS (
      -- A one-time job ends when its scheduled trigger ends: completed when it succeeded, failed when
      -- it ended dead or unknown (at-most-once, lost in flight: not a success either); 410 Gone pauses
      -- any job. Each job is looked up once (grouped), not once per fire of a cron job's backlog in the
      -- batch. With two triggers of one job in a batch, a pause wins (a plain join would leave it to chance).
      UPDATE jobs j
         SET status = CASE WHEN e.pause_job THEN 'paused' WHEN e.failed THEN 'failed' ELSE 'completed' END,
             updated_at = now()
        FROM (SELECT d.job_id, bool_or(d.pause_job IS TRUE) AS pause_job,
                     bool_or(d.kind = 'scheduled' AND d.status IN ('dead', 'unknown')) AS failed FROM done d
               WHERE d.pause_job OR (d.kind = 'scheduled' AND d.status IN ('succeeded', 'dead', 'unknown'))
               GROUP BY d.job_id) e
       WHERE j.id = e.job_id AND j.status = 'active' AND (e.pause_job OR j.cron IS NULL)
          AND j.tenant_id = p_tenant
      RETURNING j.tenant_id, j.status
    ),
    uncount AS (
      -- A completed or failed job is no longer live: it stops counting against maxJobs.
      UPDATE tenant_counters c SET live_jobs = c.live_jobs - x.n
        FROM (SELECT tenant_id, count(*)::int AS n FROM job_end WHERE status IN ('completed', 'failed')
               GROUP BY tenant_id) x
       WHERE c.tenant_id = x.tenant_id AND c.tenant_id = p_tenant
      RETURNING 1
    ),
    -- Worker time: correct each tenant's virtual time by what it really used (the claim charged an
    -- estimate) and move the estimate towards reality (EWMA). 1 ms floor: no-op work still costs a slot.
    -- And the running count: less the settled rows that were counted, plus the standby rows moved in.
    used AS (
      SELECT tenant_id, type, sum(n)::int AS n, sum(total_ms) AS total_ms, sum(uncount)::int AS uncount FROM (
        SELECT d.tenant_id, d.type, count(*) AS n, sum(greatest(1, d.duration_ms)) AS total_ms,
               count(*) FILTER (WHERE NOT d.standby) AS uncount
          FROM done d GROUP BY d.tenant_id, d.type
        UNION ALL
        SELECT m.tenant_id, m.type, 0, 0, -count(*) FROM moved m GROUP BY m.tenant_id, m.type) x
       GROUP BY tenant_id, type
    ),
    -- Lock order (no deadlocks; docs/guarantees.md): the trigger rows, the jobs ("jlock", then the ones
    -- they end), the tenants' counters ("uncount", read in full first), then tenant_pools rows in key
    -- order, as the claim does. The rows are locked with what each is charged, so the update below joins nothing else per row (joining "used" and
    -- "locked" again plans as a nested loop over both, quadratic in the batch's tenants).
    locked AS MATERIALIZED (
      SELECT tp.tenant_id, tp.type, u.n, u.total_ms, u.uncount FROM tenant_pools tp
        JOIN used u ON u.tenant_id = tp.tenant_id AND u.type = tp.type
       WHERE (SELECT count(*) FROM uncount) >= 0 AND tp.tenant_id = p_tenant
       ORDER BY tp.tenant_id, tp.type
         FOR UPDATE OF tp
    ),
    charge AS (
      UPDATE tenant_pools tp
         SET vtime = tp.vtime + (l.total_ms - l.n * tp.cost_ms) / greatest(0.01, least(1000, t.weight)),
             cost_ms = CASE WHEN l.n = 0 THEN tp.cost_ms
                            ELSE greatest(1, 0.8 * tp.cost_ms + 0.2 * (l.total_ms / l.n)) END,
             -- Every settled row was running (the fence), and none is now.
             running = tp.running - l.uncount
        FROM locked l JOIN tenants t ON t.id = l.tenant_id AND t.id = p_tenant
       WHERE tp.tenant_id = l.tenant_id AND tp.type = l.type AND tp.tenant_id = p_tenant
    ),
    -- The same per fairness key, for the settled rows that have one (none is ever on standby): its
    -- correction by real worker time over its weight (the claim charged its tenant's estimate in the
    -- pool, read here as this statement found it), its running count, and its recent worker time
    -- (sql/keys.ts). The correction goes to vcorr, not the indexed vtime (schema.ts, tenantKeys): the
    -- update is HOT. Locked in key order, after every tenant_pools row (lock order as above): count(*)
    -- reads all of "locked" first, where EXISTS would stop at its first row and lock the keys between
    -- two tenant_pools rows — a cycle with a claim, which locks them all first.
    kused AS (
      SELECT x.tenant_id, x.key, sum(x.total_ms) AS total_ms, sum(x.charged) AS charged, sum(x.uncount)::int AS uncount
        FROM (SELECT d.tenant_id, d.key, sum(greatest(1, d.duration_ms)) AS total_ms,
                     count(*) * coalesce(min(tp.cost_ms), 100) AS charged,
                     count(*) FILTER (WHERE NOT d.standby) AS uncount
                FROM done d LEFT JOIN tenant_pools tp ON tp.tenant_id = d.tenant_id AND tp.type = d.type AND tp.tenant_id = p_tenant
               WHERE d.key IS NOT NULL GROUP BY d.tenant_id, d.key, d.type) x
       GROUP BY x.tenant_id, x.key
    ),
    klocked AS MATERIALIZED (
      SELECT k.tenant_id, k.key, u.total_ms, u.charged, u.uncount,
             greatest(0.01, least(1000, coalesce((k.override->>'weight')::float8, t.key_weight))) AS weight
        FROM tenant_keys k
        JOIN kused u ON u.tenant_id = k.tenant_id AND u.key = k.key
        JOIN tenants t ON t.id = k.tenant_id AND t.id = p_tenant
       WHERE (SELECT count(*) FROM locked) >= 0 AND k.tenant_id = p_tenant
       ORDER BY k.tenant_id, k.key
         FOR UPDATE OF k
    ),
    kcharge AS (
      UPDATE tenant_keys k
         SET vcorr = k.vcorr + (l.total_ms - l.charged) / l.weight,
             running = k.running - l.uncount,
             work_ms = (k.work_ms * power(0.5::float8, extract(epoch FROM now() - k.work_at)::float8 / 300)) + l.total_ms, work_at = now()
        FROM klocked l
       WHERE k.tenant_id = l.tenant_id AND k.key = l.key AND k.tenant_id = p_tenant
    )
    -- One text value (packed.ts): parsing it costs Node a fraction of what six columns × a thousand
    -- rows did, and building it costs Postgres less than JSON per row did.
    SELECT coalesce(string_agg(concat_ws(chr(31), d.id, d.tenant_id, d.job_id, d.type, d.status, d.duration_ms), chr(30)), '') AS settled
      FROM done d
  INTO v_settled;
  IF p_log THEN

      INSERT INTO attempt_log (trigger_id, tenant_id, attempt, started_at, duration_ms, outcome,
                               http_status, error, response_body, detail)
      SELECT t.id, t.tenant_id, i.attempt, i.started_at, round(i.duration_ms)::int, i.outcome,
             i.http_status, i.error, i.response_body, i.detail::jsonb
        
        FROM triggers t JOIN (
      SELECT x->>0 AS id, x->>1 AS token, (x->>2)::int AS attempt, x->>3 AS status,
             to_timestamp((x->>4)::float8 / 1000) AS started_at, (x->>5)::float8 AS duration_ms,
             x->>6 AS outcome, to_timestamp((x->>7)::float8 / 1000) AS next_attempt_at, x->>8 AS reason,
             (x->>9)::int AS http_status, x->>10 AS error, x->>11 AS response_body,
             (x->>12)::boolean AS pause_job, (x->>13)::boolean AS reap, x->>14 AS detail,
             -- Recorded in the trigger's row (the attempts view spells it out as outcome "success", no error).
             coalesce(x->>3 = 'succeeded' AND (x->>2)::int = 1 AND x->>6 = 'success' AND x->>10 IS NULL, false) AS ok,
             -- Read once here: Citus refuses now() inside a CASE of an update of a distributed table.
             now() AS now
        FROM jsonb_array_elements(p_input::jsonb) AS x) i ON t.id = i.id
       WHERE t.tenant_id = p_tenant AND t.id = ANY (p_ids::text[]) AND t.updated_at = now()
         AND t.status = i.status AND t.attempt_count = i.attempt AND t.lease_token IS NULL AND NOT i.ok
      ON CONFLICT DO NOTHING;
  END IF;
  IF p_detail THEN

      INSERT INTO success_detail (trigger_id, tenant_id, detail)
      SELECT t.id, t.tenant_id, i.detail 
        FROM triggers t JOIN (
      SELECT x->>0 AS id, x->>1 AS token, (x->>2)::int AS attempt, x->>3 AS status,
             to_timestamp((x->>4)::float8 / 1000) AS started_at, (x->>5)::float8 AS duration_ms,
             x->>6 AS outcome, to_timestamp((x->>7)::float8 / 1000) AS next_attempt_at, x->>8 AS reason,
             (x->>9)::int AS http_status, x->>10 AS error, x->>11 AS response_body,
             (x->>12)::boolean AS pause_job, (x->>13)::boolean AS reap, x->>14 AS detail,
             -- Recorded in the trigger's row (the attempts view spells it out as outcome "success", no error).
             coalesce(x->>3 = 'succeeded' AND (x->>2)::int = 1 AND x->>6 = 'success' AND x->>10 IS NULL, false) AS ok,
             -- Read once here: Citus refuses now() inside a CASE of an update of a distributed table.
             now() AS now
        FROM jsonb_array_elements(p_input::jsonb) AS x) i ON t.id = i.id
       WHERE t.tenant_id = p_tenant AND t.id = ANY (p_ids::text[]) AND t.updated_at = now()
         AND t.status = i.status AND t.attempt_count = i.attempt AND t.lease_token IS NULL AND i.ok AND i.detail IS NOT NULL
      ON CONFLICT DO NOTHING;
  END IF;
  RETURN v_settled;
END $fn$;
