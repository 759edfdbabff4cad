-- A trigger on standby (triggers.standby, store sql/standby.ts) is running but not counted in its
-- tenant's tenant_pools.running: cancelling, skipping or deleting it by hand must not uncount it.
CREATE OR REPLACE FUNCTION "trigger_queue_sync"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'running' AND NOT OLD.standby AND NEW.status IN ('cancelled', 'skipped') THEN
    UPDATE tenant_pools SET running = running - 1 WHERE tenant_id = OLD.tenant_id AND type = OLD.type;
  END IF;
  IF NEW.status = 'dead' AND OLD.status <> 'dead' THEN
    INSERT INTO dead_letters (tenant_id, trigger_id) VALUES (NEW.tenant_id, NEW.id) ON CONFLICT DO NOTHING;
  ELSIF OLD.status = 'dead' AND NEW.status <> 'dead' THEN
    DELETE FROM dead_letters WHERE tenant_id = OLD.tenant_id AND trigger_id = OLD.id;
  END IF;
  IF NEW.status = 'pending' THEN
    INSERT INTO trigger_queue (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at)
    VALUES (NEW.id, NEW.tenant_id, NEW.job_id, NEW.type, NEW.priority, NEW.exclusive, NEW.next_attempt_at)
    ON CONFLICT (id) DO UPDATE
      SET tenant_id = excluded.tenant_id, job_id = excluded.job_id, type = excluded.type,
          priority = excluded.priority, exclusive = excluded.exclusive, next_attempt_at = excluded.next_attempt_at;
  ELSIF OLD.status = 'pending' THEN
    DELETE FROM trigger_queue WHERE id = OLD.id;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "trigger_queue_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM trigger_queue q USING deleted d WHERE q.id = d.id AND d.status = 'pending';
  DELETE FROM dead_letters l USING deleted d WHERE l.tenant_id = d.tenant_id AND l.trigger_id = d.id AND d.status = 'dead';
  UPDATE tenant_pools tp SET running = tp.running - g.n
    FROM (SELECT tenant_id, type, count(*)::int AS n FROM deleted WHERE status = 'running' AND NOT standby GROUP BY 1, 2) g
   WHERE tp.tenant_id = g.tenant_id AND tp.type = g.type;
  RETURN NULL;
END $$;
