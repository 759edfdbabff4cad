DROP VIEW "public"."attempts";--> statement-breakpoint
ALTER TABLE "triggers" DROP COLUMN "ok_detail";--> statement-breakpoint
CREATE VIEW "public"."attempts" AS (
  SELECT trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, http_status, error, response_body, detail, created_at
    FROM attempt_log
  UNION ALL
  SELECT t.id, t.tenant_id, 1, t.ok_started_at, t.ok_duration_ms, 'success', t.ok_http_status, NULL, t.ok_response_body,
         s.detail::jsonb, t.finished_at
    FROM triggers t LEFT JOIN success_detail s ON s.trigger_id = t.id
   WHERE t.ok_started_at IS NOT NULL);