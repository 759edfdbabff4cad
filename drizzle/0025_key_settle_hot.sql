ALTER TABLE "tenant_keys" ADD COLUMN "vcorr" double precision DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Hand-written (drizzle cannot declare it): room on each page for a key row's HOT updates (settle,
-- release), which stay on the page only while it has space.
ALTER TABLE "tenant_keys" SET (fillfactor = 50);--> statement-breakpoint
-- A key that becomes backlogged folds its settles' corrections (vcorr) into vtime, then starts at the
-- least virtual time among its tenant's backlogged keys, never below it (migration 0021).
CREATE OR REPLACE FUNCTION "tenant_key_enqueue"(p_tenant text, p_key text, p_n int) RETURNS void LANGUAGE plpgsql AS $$
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
END $$;
