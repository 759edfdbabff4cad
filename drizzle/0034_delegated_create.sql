-- Hand-written: the create's delegated function (packages/store/src/sql/delegated.ts, whose text this must be:
-- packages/store/test/functions.pg.test.ts): one tenant's batch of creates as one call.
CREATE OR REPLACE FUNCTION fairway_create(p_tenant text, p_input jsonb, p_keys jsonb, p_ids text[],
  p_max_jobs integer) RETURNS json
 LANGUAGE plpgsql AS $fn$
DECLARE v_lock record; v_jobs record;
BEGIN

      SELECT c.live_jobs AS live,
             ARRAY(SELECT h.idempotency_key FROM jobs h
                    WHERE h.tenant_id = p_tenant AND h.idempotency_key IN (SELECT jsonb_array_elements_text(p_keys::jsonb))) AS held
        FROM tenant_counters c
       WHERE c.tenant_id = p_tenant
         AND c.tenant_id = (SELECT t.id FROM tenants t WHERE t.id = p_tenant FOR KEY SHARE)
         FOR NO KEY UPDATE OF c
  INTO v_lock;
WITH ins AS (
      INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, spread_ms, run_at, next_fire_at, target, payload, max_attempts, initial_delay_ms, max_delay_ms, backoff, jitter, timeout_ms, priority, overlap, misfire, delivery, catchup_window_ms, status, notify, key, debounce, on_busy, tags, traceparent, tracestate, idempotency_key, idempotency_hash)
      SELECT x.id, t.id, x.name, x.type, x.cron, x.timezone, x.spread_ms, x.run_at, x.next_fire_at, x.target, x.payload, x.max_attempts, x.initial_delay_ms, x.max_delay_ms, x.backoff, x.jitter, x.timeout_ms, x.priority, x.overlap, x.misfire, x.delivery, x.catchup_window_ms, x.status, x.notify, x.key, x.debounce, x.on_busy, x.tags, x.traceparent, x.tracestate, x.idempotency_key, x.idempotency_hash
        FROM tenants t
        CROSS JOIN jsonb_to_recordset(p_input::jsonb) AS x(
        ord int, dup boolean, id text, name text, type text, cron text, timezone text, spread_ms int, run_at timestamptz,
        next_fire_at timestamptz, target jsonb, payload jsonb, max_attempts int, initial_delay_ms int,
        max_delay_ms int, backoff text, jitter text, timeout_ms int, priority int, overlap text, misfire text, delivery text, catchup_window_ms int,
        status text, notify jsonb, key text, debounce jsonb, on_busy text, tags jsonb, traceparent text, tracestate text, idempotency_key text, idempotency_hash text, trigger_id text, new_pool boolean, rank int, prior_keys text[])
       WHERE t.id = p_tenant AND NOT x.dup
         AND NOT EXISTS (SELECT 1 FROM jobs h WHERE h.tenant_id = p_tenant AND h.idempotency_key = x.idempotency_key)
         AND x.rank - (SELECT count(*) FROM jobs h WHERE h.tenant_id = p_tenant AND h.idempotency_key = ANY (x.prior_keys))
             <= p_max_jobs::int - (SELECT c.live_jobs FROM tenant_counters c WHERE c.tenant_id = p_tenant)
      ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
      RETURNING "id" AS "id", "tenant_id" AS "tenantId", "name" AS "name", "type" AS "type", "cron" AS "cron", "timezone" AS "timezone", "spread_ms" AS "spreadMs", "run_at" AS "runAt", "target" AS "target", "payload" AS "payload", "max_attempts" AS "maxAttempts", "initial_delay_ms" AS "initialDelayMs", "max_delay_ms" AS "maxDelayMs", "backoff" AS "backoff", "jitter" AS "jitter", "timeout_ms" AS "timeoutMs", "priority" AS "priority", "overlap" AS "overlap", "misfire" AS "misfire", "delivery" AS "delivery", "catchup_window_ms" AS "catchupWindowMs", "status" AS "status", "pause_reason" AS "pauseReason", "failure_streak" AS "failureStreak", "notify" AS "notify", "next_fire_at" AS "nextFireAt", "idempotency_key" AS "idempotencyKey", "idempotency_hash" AS "idempotencyHash", "key" AS "key", "debounce" AS "debounce", "on_busy" AS "onBusy", "tags" AS "tags", "traceparent" AS "traceparent", "tracestate" AS "tracestate", "created_at" AS "createdAt", "updated_at" AS "updatedAt") SELECT coalesce(json_agg(ins), '[]'::json) AS jobs FROM ins
  INTO v_jobs;

      INSERT INTO triggers (id, tenant_id, job_id, type, scheduled_for, next_attempt_at, priority, exclusive, max_attempts, key)
      SELECT x.trigger_id, j.tenant_id, j.id, j.type, j.run_at, j.run_at, j.priority, j.overlap <> 'allow', j.max_attempts, j.key
        FROM jobs j JOIN jsonb_to_recordset(p_input::jsonb) AS x(id text, trigger_id text) ON x.id = j.id
       WHERE j.tenant_id = p_tenant AND j.id = ANY (p_ids::text[]) AND j.run_at IS NOT NULL;

      UPDATE tenant_counters c SET live_jobs = c.live_jobs + a.n
        FROM (SELECT count(*)::int AS n FROM jobs j WHERE j.tenant_id = p_tenant AND j.id = ANY (p_ids::text[])) a
       WHERE c.tenant_id = p_tenant AND a.n > 0;
  RETURN json_build_object('lock', json_build_object('live', v_lock.live, 'held', v_lock.held), 'jobs', v_jobs.jobs);
END $fn$;
