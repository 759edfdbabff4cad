CREATE TABLE "secrets" (
	"tenant_id" text COLLATE "C" NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"sealed" text NOT NULL,
	"key_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "secrets_tenant_id_name_pk" PRIMARY KEY("tenant_id","name")
);
--> statement-breakpoint
DROP VIEW "public"."attempts";--> statement-breakpoint
ALTER TABLE "attempt_log" ADD COLUMN "detail" jsonb;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "backoff" text DEFAULT 'exponential' NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "jitter" text DEFAULT 'full' NOT NULL;--> statement-breakpoint
ALTER TABLE "pools" ADD COLUMN "backoff" text DEFAULT 'exponential' NOT NULL;--> statement-breakpoint
ALTER TABLE "pools" ADD COLUMN "jitter" text DEFAULT 'full' NOT NULL;--> statement-breakpoint
ALTER TABLE "pools" ADD COLUMN "max_response_bytes" integer DEFAULT 65536 NOT NULL;--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "replayed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "ok_detail" jsonb;--> statement-breakpoint
ALTER TABLE "secrets" ADD CONSTRAINT "secrets_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE VIEW "public"."attempts" AS (
  SELECT trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, http_status, error, response_body, detail, created_at
    FROM attempt_log
  UNION ALL
  SELECT id, tenant_id, 1, ok_started_at, ok_duration_ms, 'success', ok_http_status, NULL, ok_response_body, ok_detail, finished_at
    FROM triggers
   WHERE ok_started_at IS NOT NULL);