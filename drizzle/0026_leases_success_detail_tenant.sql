DROP VIEW "public"."attempts";--> statement-breakpoint
ALTER TABLE "leases" ADD COLUMN "tenant_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "success_detail" ADD COLUMN "tenant_id" text COLLATE "C";--> statement-breakpoint
CREATE VIEW "public"."attempts" AS (
  SELECT trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, http_status, error, response_body, detail, created_at
    FROM attempt_log
  UNION ALL
  SELECT t.id, t.tenant_id, 1, t.ok_started_at, t.ok_duration_ms, 'success', t.ok_http_status, NULL, t.ok_response_body,
         s.detail::jsonb, t.finished_at
    FROM triggers t LEFT JOIN success_detail s ON s.tenant_id = t.tenant_id AND s.trigger_id = t.id
   WHERE t.ok_started_at IS NOT NULL);--> statement-breakpoint
-- Hand-written: the rows written before the column, given their trigger's tenant (settle writes it). On
-- a Citus coordinator whose success_detail is distributed already, the layout step does it instead.
DO $$
DECLARE citus_table int;
BEGIN
  IF to_regclass('pg_dist_partition') IS NOT NULL THEN
    EXECUTE 'SELECT 1 FROM pg_dist_partition WHERE logicalrelid::text = ''success_detail''' INTO citus_table;
    IF citus_table IS NOT NULL THEN RETURN; END IF;
  END IF;
  UPDATE "success_detail" s SET "tenant_id" = t."tenant_id" FROM "triggers" t WHERE t."id" = s."trigger_id" AND s."tenant_id" IS NULL;
END $$;
