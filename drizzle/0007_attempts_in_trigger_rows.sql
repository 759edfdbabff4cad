ALTER TABLE "attempts" RENAME TO "attempt_log";--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "ok_started_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "ok_duration_ms" integer;--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "ok_http_status" integer;--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "ok_response_body" text;--> statement-breakpoint
CREATE VIEW "public"."attempts" AS (
  SELECT trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, http_status, error, response_body, created_at
    FROM attempt_log
  UNION ALL
  SELECT id, tenant_id, 1, ok_started_at, ok_duration_ms, 'success', ok_http_status, NULL, ok_response_body, finished_at
    FROM triggers
   WHERE ok_started_at IS NOT NULL);