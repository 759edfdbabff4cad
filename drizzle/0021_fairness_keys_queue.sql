-- Hand-written: the queue's triggers (migration 0009, 0015) carry a trigger's fairness key into its
-- queue row and keep tenant_keys (schema.ts, tenantKeys): `queued` = the key's rows in trigger_queue,
-- `running` = its counted running triggers. Triggers without a key take the same path as before: every
-- key statement below reads only rows whose key is set.
-- A key that becomes backlogged (queued from 0) starts at the least virtual time among its tenant's
-- backlogged keys, never below it: no banked credit (docs/fairness.md, "Fairness keys").
CREATE FUNCTION "tenant_key_enqueue"(p_tenant text, p_key text, p_n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tenant_keys AS k (tenant_id, key, queued, vtime, active_at)
  VALUES (p_tenant, p_key, p_n,
          coalesce((SELECT m.vtime FROM tenant_keys m WHERE m.tenant_id = p_tenant AND m.queued > 0
                     ORDER BY m.vtime LIMIT 1), 0),
          now())
  ON CONFLICT (tenant_id, key) DO UPDATE
    SET queued = k.queued + excluded.queued, active_at = now(),
        vtime = CASE WHEN k.queued = 0 THEN greatest(k.vtime, excluded.vtime) ELSE k.vtime END;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "trigger_queue_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  INSERT INTO trigger_queue (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at, key)
  SELECT id, tenant_id, job_id, type, priority, exclusive, next_attempt_at, key FROM inserted WHERE status = 'pending';
  INSERT INTO dead_letters (tenant_id, trigger_id) SELECT tenant_id, id FROM inserted WHERE status = 'dead';
  INSERT INTO tenant_pools AS tp (tenant_id, type, running)
  SELECT tenant_id, type, count(*)::int FROM inserted WHERE status = 'running' GROUP BY 1, 2
  ON CONFLICT (tenant_id, type) DO UPDATE SET running = tp.running + excluded.running;
  -- Keys, in key order (the order claim and settle lock tenant_keys rows in).
  FOR r IN SELECT tenant_id, key, count(*)::int AS n FROM inserted
            WHERE status = 'pending' AND key IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2 LOOP
    PERFORM tenant_key_enqueue(r.tenant_id, r.key, r.n);
  END LOOP;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "trigger_queue_sync"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'running' AND NOT OLD.standby AND NEW.status IN ('cancelled', 'skipped') THEN
    UPDATE tenant_pools SET running = running - 1 WHERE tenant_id = OLD.tenant_id AND type = OLD.type;
    IF OLD.key IS NOT NULL THEN
      UPDATE tenant_keys SET running = running - 1, active_at = now() WHERE tenant_id = OLD.tenant_id AND key = OLD.key;
    END IF;
  END IF;
  IF NEW.status = 'dead' AND OLD.status <> 'dead' THEN
    INSERT INTO dead_letters (tenant_id, trigger_id) VALUES (NEW.tenant_id, NEW.id) ON CONFLICT DO NOTHING;
  ELSIF OLD.status = 'dead' AND NEW.status <> 'dead' THEN
    DELETE FROM dead_letters WHERE tenant_id = OLD.tenant_id AND trigger_id = OLD.id;
  END IF;
  IF NEW.status = 'pending' THEN
    -- A queue row that leaves its key (or was not there) is uncounted there and counted in its new one.
    IF OLD.status = 'pending' AND OLD.key IS NOT NULL AND OLD.key IS DISTINCT FROM NEW.key THEN
      UPDATE tenant_keys SET queued = queued - 1 WHERE tenant_id = OLD.tenant_id AND key = OLD.key;
    END IF;
    IF NEW.key IS NOT NULL AND (OLD.status <> 'pending' OR OLD.key IS DISTINCT FROM NEW.key) THEN
      PERFORM tenant_key_enqueue(NEW.tenant_id, NEW.key, 1);
    END IF;
    INSERT INTO trigger_queue (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at, key)
    VALUES (NEW.id, NEW.tenant_id, NEW.job_id, NEW.type, NEW.priority, NEW.exclusive, NEW.next_attempt_at, NEW.key)
    ON CONFLICT (id) DO UPDATE
      SET tenant_id = excluded.tenant_id, job_id = excluded.job_id, type = excluded.type,
          priority = excluded.priority, exclusive = excluded.exclusive, next_attempt_at = excluded.next_attempt_at,
          key = excluded.key;
  ELSIF OLD.status = 'pending' THEN
    DELETE FROM trigger_queue WHERE id = OLD.id;
    IF OLD.key IS NOT NULL THEN
      UPDATE tenant_keys SET queued = queued - 1 WHERE tenant_id = OLD.tenant_id AND key = OLD.key;
    END IF;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
DROP TRIGGER "triggers_queue_sync" ON "triggers";--> statement-breakpoint
CREATE TRIGGER "triggers_queue_sync" AFTER UPDATE ON "triggers" FOR EACH ROW
  WHEN ((OLD.status = 'pending' AND NEW.status NOT IN ('pending', 'running'))
     OR (OLD.status = 'running' AND NEW.status IN ('cancelled', 'skipped'))
     OR ((OLD.status = 'dead') <> (NEW.status = 'dead'))
     OR (NEW.status = 'pending' AND (OLD.status <> 'pending'
         OR (OLD.tenant_id, OLD.job_id, OLD.type, OLD.priority, OLD.exclusive, OLD.next_attempt_at, OLD.key)
            IS DISTINCT FROM (NEW.tenant_id, NEW.job_id, NEW.type, NEW.priority, NEW.exclusive, NEW.next_attempt_at, NEW.key))))
  EXECUTE FUNCTION "trigger_queue_sync"();--> statement-breakpoint
CREATE OR REPLACE FUNCTION "trigger_queue_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM trigger_queue q USING deleted d WHERE q.id = d.id AND d.status = 'pending';
  DELETE FROM dead_letters l USING deleted d WHERE l.tenant_id = d.tenant_id AND l.trigger_id = d.id AND d.status = 'dead';
  UPDATE tenant_pools tp SET running = tp.running - g.n
    FROM (SELECT tenant_id, type, count(*)::int AS n FROM deleted WHERE status = 'running' AND NOT standby GROUP BY 1, 2) g
   WHERE tp.tenant_id = g.tenant_id AND tp.type = g.type;
  UPDATE tenant_keys k SET queued = k.queued - g.q, running = k.running - g.r
    FROM (SELECT tenant_id, key, count(*) FILTER (WHERE status = 'pending')::int AS q,
                 count(*) FILTER (WHERE status = 'running' AND NOT standby)::int AS r
            FROM deleted WHERE key IS NOT NULL AND status IN ('pending', 'running') GROUP BY 1, 2) g
   WHERE k.tenant_id = g.tenant_id AND k.key = g.key;
  RETURN NULL;
END $$;
