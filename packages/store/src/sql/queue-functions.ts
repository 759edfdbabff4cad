// The queue's plpgsql functions (docs/architecture.md, "The queue's triggers"), one source for both
// places they are installed: `text` is what the migrations hold (the latest migration that defines each
// must hold it, as written here: packages/store/test/functions.pg.test.ts), `clusterText` what the
// layout step installs on a Citus cluster after every migration (citus.ts). A change to a function is
// a change here and a migration carrying the new `text`.

export interface QueueFunction {
  name: string;
  /** The regprocedure, e.g. `trigger_queue_sync()`. */
  signature: string;
  /** As the migrations define it (on one PostgreSQL, and before the layout step on a cluster). */
  text: string;
  /** As a cluster runs it (below). */
  clusterText: string;
}

/** The queue's triggers (docs/architecture.md, "The queue's triggers") as a cluster runs them. On a
 *  distributed `triggers` they fire on its shards, and a statement there that reads a transition table
 *  is pushed down to other nodes, which do not have it: each function copies the transition table
 *  into a value first. And every write names its tenant, so it goes to the colocated shard (on the
 *  same node) rather than to every shard. Same effects as the plain functions of the migrations
 *  (tenant_key_enqueue as 0025 left it, the queue's functions as 0021 did); the cluster test checks the queue against the trigger rows. */
export const QUEUE_FUNCTIONS: QueueFunction[] = [
  {
    name: "tenant_key_enqueue",
    signature: "tenant_key_enqueue(text, text, integer)",
    // As 0025 left it. On a cluster: Citus takes no subquery inside an INSERT, nor now() in its DO
    // UPDATE, so the least backlogged vtime is read first, and the time comes in through excluded.
    text: `CREATE OR REPLACE FUNCTION "tenant_key_enqueue"(p_tenant text, p_key text, p_n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tenant_keys AS k (tenant_id, key, queued, vtime, active_at)
  VALUES (p_tenant, p_key, p_n,
          coalesce((SELECT m.vtime + m.vcorr FROM tenant_keys m WHERE m.tenant_id = p_tenant AND m.queued > 0
                     ORDER BY m.vtime LIMIT 1), 0),
          now())
  ON CONFLICT (tenant_id, key) DO UPDATE
    SET queued = k.queued + excluded.queued, active_at = now(),
        vtime = CASE WHEN k.queued = 0 THEN greatest(k.vtime + k.vcorr, excluded.vtime) ELSE k.vtime END,
        vcorr = CASE WHEN k.queued = 0 THEN 0 ELSE k.vcorr END;
END $$`,
    clusterText: `CREATE OR REPLACE FUNCTION tenant_key_enqueue(p_tenant text, p_key text, p_n integer) RETURNS void
   LANGUAGE plpgsql AS $$
DECLARE least_vtime float8;
BEGIN
  SELECT m.vtime + m.vcorr INTO least_vtime FROM tenant_keys m WHERE m.tenant_id = p_tenant AND m.queued > 0
   ORDER BY m.vtime LIMIT 1;
  INSERT INTO tenant_keys AS k (tenant_id, key, queued, vtime, active_at)
  VALUES (p_tenant, p_key, p_n, coalesce(least_vtime, 0), now())
  ON CONFLICT (tenant_id, key) DO UPDATE
    SET queued = k.queued + excluded.queued, active_at = excluded.active_at,
        vtime = CASE WHEN k.queued = 0 THEN greatest(k.vtime + k.vcorr, excluded.vtime) ELSE k.vtime END,
        vcorr = CASE WHEN k.queued = 0 THEN 0 ELSE k.vcorr END;
END $$`,
  },
  {
    name: "trigger_queue_insert",
    signature: "trigger_queue_insert()",
    // As 0021 left it.
    text: `CREATE OR REPLACE FUNCTION "trigger_queue_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$`,
    clusterText: `CREATE OR REPLACE FUNCTION trigger_queue_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record; rows jsonb;
BEGIN
  SELECT jsonb_agg(to_jsonb(i)) INTO rows FROM inserted i;
  INSERT INTO trigger_queue (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at, key)
  SELECT id, tenant_id, job_id, type, priority, exclusive, next_attempt_at, key
    FROM jsonb_populate_recordset(NULL::triggers, rows) WHERE status = 'pending';
  INSERT INTO dead_letters (tenant_id, trigger_id)
  SELECT tenant_id, id FROM jsonb_populate_recordset(NULL::triggers, rows) WHERE status = 'dead';
  INSERT INTO tenant_pools AS tp (tenant_id, type, running)
  SELECT tenant_id, type, count(*)::int FROM jsonb_populate_recordset(NULL::triggers, rows)
   WHERE status = 'running' GROUP BY 1, 2
  ON CONFLICT (tenant_id, type) DO UPDATE SET running = tp.running + excluded.running;
  FOR r IN SELECT tenant_id, key, count(*)::int AS n FROM jsonb_populate_recordset(NULL::triggers, rows)
            WHERE status = 'pending' AND key IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2 LOOP
    PERFORM tenant_key_enqueue(r.tenant_id, r.key, r.n);
  END LOOP;
  RETURN NULL;
END $$`,
  },
  {
    name: "trigger_queue_delete",
    signature: "trigger_queue_delete()",
    // As 0021 left it.
    text: `CREATE OR REPLACE FUNCTION "trigger_queue_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$`,
    clusterText: `CREATE OR REPLACE FUNCTION trigger_queue_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT tenant_id, id, type, key, status, standby FROM deleted
            WHERE status IN ('pending', 'dead', 'running') ORDER BY tenant_id, key LOOP
    IF r.status = 'pending' THEN
      DELETE FROM trigger_queue WHERE tenant_id = r.tenant_id AND id = r.id;
      IF r.key IS NOT NULL THEN
        UPDATE tenant_keys SET queued = queued - 1 WHERE tenant_id = r.tenant_id AND key = r.key;
      END IF;
    ELSIF r.status = 'dead' THEN
      DELETE FROM dead_letters WHERE tenant_id = r.tenant_id AND trigger_id = r.id;
    ELSIF NOT r.standby THEN
      UPDATE tenant_pools SET running = running - 1 WHERE tenant_id = r.tenant_id AND type = r.type;
      IF r.key IS NOT NULL THEN
        UPDATE tenant_keys SET running = running - 1 WHERE tenant_id = r.tenant_id AND key = r.key;
      END IF;
    END IF;
  END LOOP;
  RETURN NULL;
END $$`,
  },
  {
    name: "trigger_queue_sync",
    signature: "trigger_queue_sync()",
    // As 0021 left it.
    text: `CREATE OR REPLACE FUNCTION "trigger_queue_sync"() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$`,
    clusterText: `CREATE OR REPLACE FUNCTION trigger_queue_sync() RETURNS trigger LANGUAGE plpgsql AS $$
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
    IF OLD.status = 'pending' AND OLD.key IS NOT NULL AND OLD.key IS DISTINCT FROM NEW.key THEN
      UPDATE tenant_keys SET queued = queued - 1 WHERE tenant_id = OLD.tenant_id AND key = OLD.key;
    END IF;
    IF NEW.key IS NOT NULL AND (OLD.status <> 'pending' OR OLD.key IS DISTINCT FROM NEW.key) THEN
      PERFORM tenant_key_enqueue(NEW.tenant_id, NEW.key, 1);
    END IF;
    INSERT INTO trigger_queue (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at, key)
    VALUES (NEW.id, NEW.tenant_id, NEW.job_id, NEW.type, NEW.priority, NEW.exclusive, NEW.next_attempt_at, NEW.key)
    ON CONFLICT (tenant_id, id) DO UPDATE
      SET job_id = excluded.job_id, type = excluded.type, priority = excluded.priority,
          exclusive = excluded.exclusive, next_attempt_at = excluded.next_attempt_at, key = excluded.key;
  ELSIF OLD.status = 'pending' THEN
    DELETE FROM trigger_queue WHERE tenant_id = OLD.tenant_id AND id = OLD.id;
    IF OLD.key IS NOT NULL THEN
      UPDATE tenant_keys SET queued = queued - 1 WHERE tenant_id = OLD.tenant_id AND key = OLD.key;
    END IF;
  END IF;
  RETURN NULL;
END $$`,
  },
];
