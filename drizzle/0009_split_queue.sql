CREATE TABLE "dead_letters" (
	"tenant_id" text COLLATE "C" NOT NULL,
	"trigger_id" text COLLATE "C" NOT NULL,
	CONSTRAINT "dead_letters_tenant_id_trigger_id_pk" PRIMARY KEY("tenant_id","trigger_id")
);
--> statement-breakpoint
CREATE TABLE "leases" (
	"token" text COLLATE "C" PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"trigger_ids" text[] NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trigger_queue" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"job_id" text COLLATE "C" NOT NULL,
	"type" text COLLATE "C" NOT NULL,
	"priority" integer NOT NULL,
	"exclusive" boolean NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
DROP INDEX "triggers_claim_idx";--> statement-breakpoint
DROP INDEX "triggers_pending_type_idx";--> statement-breakpoint
DROP INDEX "triggers_running_idx";--> statement-breakpoint
DROP INDEX "triggers_dead_idx";--> statement-breakpoint
ALTER TABLE "tenant_pools" ADD COLUMN "running" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "trigger_queue_claim_idx" ON "trigger_queue" USING btree ("tenant_id","type","priority" DESC NULLS LAST,"next_attempt_at");--> statement-breakpoint
CREATE INDEX "trigger_queue_type_idx" ON "trigger_queue" USING btree ("type","tenant_id","next_attempt_at");--> statement-breakpoint
-- Hand-written from here: drizzle declares no functions or triggers. What they keep is in schema.ts
-- (triggerQueue, deadLetters, tenant_pools.running, leases). Room on each heap page of triggers for a
-- trigger's claimed and settled versions, so that both updates can be HOT; it applies to pages filled
-- from now on.
ALTER TABLE "triggers" SET (fillfactor = 50);--> statement-breakpoint
INSERT INTO "trigger_queue" (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at)
SELECT id, tenant_id, job_id, type, priority, exclusive, next_attempt_at FROM "triggers" WHERE status = 'pending';--> statement-breakpoint
INSERT INTO "dead_letters" (tenant_id, trigger_id) SELECT tenant_id, id FROM "triggers" WHERE status = 'dead';--> statement-breakpoint
INSERT INTO "tenant_pools" AS tp (tenant_id, type, running)
SELECT tenant_id, type, count(*) FROM "triggers" WHERE status = 'running' GROUP BY tenant_id, type
ON CONFLICT (tenant_id, type) DO UPDATE SET running = excluded.running;--> statement-breakpoint
INSERT INTO "leases" (token, owner, expires_at, trigger_ids)
SELECT lease_token, min(lease_owner), max(lease_expires_at), array_agg(id) FROM "triggers"
 WHERE status = 'running' GROUP BY lease_token;--> statement-breakpoint
-- Inserted triggers, whoever inserts them (materializer, job creation, run-now, seeds): queue rows for
-- the pending ones, once per statement. No statement of Fairway's inserts a running or dead trigger;
-- a hand-written one is counted or listed all the same.
CREATE FUNCTION "trigger_queue_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trigger_queue (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at)
  SELECT id, tenant_id, job_id, type, priority, exclusive, next_attempt_at FROM inserted WHERE status = 'pending';
  INSERT INTO dead_letters (tenant_id, trigger_id) SELECT tenant_id, id FROM inserted WHERE status = 'dead';
  INSERT INTO tenant_pools AS tp (tenant_id, type, running)
  SELECT tenant_id, type, count(*)::int FROM inserted WHERE status = 'running' GROUP BY 1, 2
  ON CONFLICT (tenant_id, type) DO UPDATE SET running = tp.running + excluded.running;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "triggers_queue_insert" AFTER INSERT ON "triggers" REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION "trigger_queue_insert"();--> statement-breakpoint
-- An updated trigger:
-- - moving into or out of pending (retry, release, reap, cancel, pause, replay, revival), or pending
--   and changed (PATCH): its queue row follows. The claim's pending → running is left out: the claim
--   deletes the rows it takes itself, and so pays no call per row;
-- - moving into or out of dead (a settle or reap that gives up, a replay): its dead letter follows;
-- - running and cancelled or skipped by hand (no statement of Fairway's does that; a settle's
--   outcomes and release are counted by their own statements): it stops counting as running.
-- The WHEN is tested per updated row in C; the function runs only where it holds.
CREATE FUNCTION "trigger_queue_sync"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'running' AND NEW.status IN ('cancelled', 'skipped') THEN
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
CREATE TRIGGER "triggers_queue_sync" AFTER UPDATE ON "triggers" FOR EACH ROW
  WHEN ((OLD.status = 'pending' AND NEW.status NOT IN ('pending', 'running'))
     OR (OLD.status = 'running' AND NEW.status IN ('cancelled', 'skipped'))
     OR ((OLD.status = 'dead') <> (NEW.status = 'dead'))
     OR (NEW.status = 'pending' AND (OLD.status <> 'pending'
         OR (OLD.tenant_id, OLD.job_id, OLD.type, OLD.priority, OLD.exclusive, OLD.next_attempt_at)
            IS DISTINCT FROM (NEW.tenant_id, NEW.job_id, NEW.type, NEW.priority, NEW.exclusive, NEW.next_attempt_at))))
  EXECUTE FUNCTION "trigger_queue_sync"();--> statement-breakpoint
-- Deleted triggers (only tests delete them): their queue rows and dead letters go, and running ones
-- stop counting.
CREATE FUNCTION "trigger_queue_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM trigger_queue q USING deleted d WHERE q.id = d.id AND d.status = 'pending';
  DELETE FROM dead_letters l USING deleted d WHERE l.tenant_id = d.tenant_id AND l.trigger_id = d.id AND d.status = 'dead';
  UPDATE tenant_pools tp SET running = tp.running - g.n
    FROM (SELECT tenant_id, type, count(*)::int AS n FROM deleted WHERE status = 'running' GROUP BY 1, 2) g
   WHERE tp.tenant_id = g.tenant_id AND tp.type = g.type;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "triggers_queue_delete" AFTER DELETE ON "triggers" REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION "trigger_queue_delete"();
