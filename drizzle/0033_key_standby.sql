-- Hand-written: the delegated settle (packages/store/src/sql/delegated.ts) as the settle statement now
-- makes it: a standby trigger of a fairness key moved in at its hand-over is counted in its key
-- (tenant_keys.running) as the finished run stops being counted there (packages/store/src/sql/standby.ts).
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
      RETURNING t.tenant_id, t.type, t.key
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
    -- The same per fairness key, for the settled rows that have one: its correction by real worker
    -- time over its weight (the claim charged its tenant's estimate in the pool, read here as this
    -- statement found it), its running count (less the settled rows that were counted, plus the
    -- standby rows of the key moved in: a keyed standby trigger takes over only from its own key's run,
    -- standby.ts), and its recent worker time (sql/keys.ts). The correction goes to vcorr, not the indexed vtime (schema.ts, tenantKeys): the
    -- update is HOT. Locked in key order, after every tenant_pools row (lock order as above): count(*)
    -- reads all of "locked" first, where EXISTS would stop at its first row and lock the keys between
    -- two tenant_pools rows — a cycle with a claim, which locks them all first.
    kused AS (
      SELECT x.tenant_id, x.key, sum(x.total_ms) AS total_ms, sum(x.charged) AS charged, sum(x.uncount)::int AS uncount
        FROM (SELECT d.tenant_id, d.key, sum(greatest(1, d.duration_ms)) AS total_ms,
                     count(*) * coalesce(min(tp.cost_ms), 100) AS charged,
                     count(*) FILTER (WHERE NOT d.standby) AS uncount
                FROM done d LEFT JOIN tenant_pools tp ON tp.tenant_id = d.tenant_id AND tp.type = d.type AND tp.tenant_id = p_tenant
               WHERE d.key IS NOT NULL GROUP BY d.tenant_id, d.key, d.type
              UNION ALL
              SELECT m.tenant_id, m.key, 0, 0, -count(*) FROM moved m WHERE m.key IS NOT NULL GROUP BY m.tenant_id, m.key) x
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
