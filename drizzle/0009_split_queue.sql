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
ALTER TABLE "triggers" ADD COLUMN "dead" boolean GENERATED ALWAYS AS (status = 'dead') STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "trigger_queue_claim_idx" ON "trigger_queue" USING btree ("tenant_id","type","priority" DESC NULLS LAST,"next_attempt_at");--> statement-breakpoint
CREATE INDEX "trigger_queue_type_idx" ON "trigger_queue" USING btree ("type","tenant_id","next_attempt_at");--> statement-breakpoint
CREATE INDEX "triggers_dead_idx" ON "triggers" USING btree ("tenant_id","id") WHERE dead;--> statement-breakpoint
-- Hand-written from here (drizzle declares no functions or triggers; schema.ts, triggerQueue, says
-- what they keep). Room on each heap page for a trigger's claimed and settled versions, so that both
-- updates can be HOT. It applies to pages filled from now on.
ALTER TABLE "triggers" SET (fillfactor = 50);--> statement-breakpoint
INSERT INTO "trigger_queue" (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at)
SELECT id, tenant_id, job_id, type, priority, exclusive, next_attempt_at FROM "triggers" WHERE status = 'pending';--> statement-breakpoint
INSERT INTO "tenant_pools" AS tp (tenant_id, type, running)
SELECT tenant_id, type, count(*) FROM "triggers" WHERE status = 'running' GROUP BY tenant_id, type
ON CONFLICT (tenant_id, type) DO UPDATE SET running = excluded.running;--> statement-breakpoint
INSERT INTO "leases" (token, owner, expires_at, trigger_ids)
SELECT lease_token, min(lease_owner), max(lease_expires_at), array_agg(id) FROM "triggers"
 WHERE status = 'running' GROUP BY lease_token;--> statement-breakpoint
-- New pending triggers, whoever inserts them (materializer, job creation, run-now, seeds): their queue
-- rows, once per statement. (And running ones, which only a hand-written insert makes: counted.)
CREATE FUNCTION "trigger_queue_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trigger_queue (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at)
  SELECT id, tenant_id, job_id, type, priority, exclusive, next_attempt_at FROM inserted WHERE status = 'pending';
  -- No path of Fairway's inserts a running trigger; a hand-written row is counted all the same.
  INSERT INTO tenant_pools AS tp (tenant_id, type, running)
  SELECT tenant_id, type, count(*)::int FROM inserted WHERE status = 'running' GROUP BY 1, 2
  ON CONFLICT (tenant_id, type) DO UPDATE SET running = tp.running + excluded.running;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "triggers_queue_insert" AFTER INSERT ON "triggers" REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION "trigger_queue_insert"();--> statement-breakpoint
-- A trigger moving into or out of pending (retry, release, reap, cancel, pause, replay, revival), or a
-- pending one changed (PATCH): its queue row follows. The claim's pending → running is left out: the
-- claim deletes the rows it takes itself, and so does not pay a call per row. A running trigger
-- cancelled or skipped by hand (no statement of Fairway's does that) stops counting as running. The
-- WHEN is tested per updated row in C; the function runs only where it holds.
CREATE FUNCTION "trigger_queue_sync"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'running' AND NEW.status <> 'pending' THEN
    -- Not a settle's outcome (succeeded, dead) nor a release (pending): an operator's hand edit of a
    -- running trigger, which the running count must follow.
    UPDATE tenant_pools SET running = running - 1 WHERE tenant_id = OLD.tenant_id AND type = OLD.type;
    RETURN NULL;
  END IF;
  IF NEW.status = 'pending' THEN
    INSERT INTO trigger_queue (id, tenant_id, job_id, type, priority, exclusive, next_attempt_at)
    VALUES (NEW.id, NEW.tenant_id, NEW.job_id, NEW.type, NEW.priority, NEW.exclusive, NEW.next_attempt_at)
    ON CONFLICT (id) DO UPDATE
      SET tenant_id = excluded.tenant_id, job_id = excluded.job_id, type = excluded.type,
          priority = excluded.priority, exclusive = excluded.exclusive, next_attempt_at = excluded.next_attempt_at;
  ELSE
    DELETE FROM trigger_queue WHERE id = OLD.id;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "triggers_queue_sync" AFTER UPDATE ON "triggers" FOR EACH ROW
  WHEN ((OLD.status = 'pending' AND NEW.status NOT IN ('pending', 'running'))
     OR (OLD.status = 'running' AND NEW.status IN ('cancelled', 'skipped'))
     OR (NEW.status = 'pending' AND (OLD.status <> 'pending'
         OR (OLD.tenant_id, OLD.job_id, OLD.type, OLD.priority, OLD.exclusive, OLD.next_attempt_at)
            IS DISTINCT FROM (NEW.tenant_id, NEW.job_id, NEW.type, NEW.priority, NEW.exclusive, NEW.next_attempt_at))))
  EXECUTE FUNCTION "trigger_queue_sync"();--> statement-breakpoint
-- Deleted triggers (only tests delete them): their queue rows go, and running ones stop counting.
CREATE FUNCTION "trigger_queue_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM trigger_queue q USING deleted d WHERE q.id = d.id AND d.status = 'pending';
  UPDATE tenant_pools tp SET running = tp.running - g.n
    FROM (SELECT tenant_id, type, count(*)::int AS n FROM deleted WHERE status = 'running' GROUP BY 1, 2) g
   WHERE tp.tenant_id = g.tenant_id AND tp.type = g.type;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "triggers_queue_delete" AFTER DELETE ON "triggers" REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION "trigger_queue_delete"();
