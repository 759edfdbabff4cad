CREATE TABLE "tenant_keys" (
	"tenant_id" text COLLATE "C" NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"vtime" double precision DEFAULT 0 NOT NULL,
	"running" integer DEFAULT 0 NOT NULL,
	"queued" integer DEFAULT 0 NOT NULL,
	"rate_tokens" double precision,
	"rate_updated_at" timestamp with time zone,
	"work_ms" double precision DEFAULT 0 NOT NULL,
	"work_at" timestamp with time zone DEFAULT now() NOT NULL,
	"active_at" timestamp with time zone DEFAULT now() NOT NULL,
	"override" jsonb,
	CONSTRAINT "tenant_keys_tenant_id_key_pk" PRIMARY KEY("tenant_id","key"),
	CONSTRAINT "tenant_keys_key_printable" CHECK ("tenant_keys"."key" !~ '[[:cntrl:]]')
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "key" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "key_max_in_flight" integer;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "key_rate_per_second" double precision;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "key_weight" double precision DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "trigger_queue" ADD COLUMN "key" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "key" text COLLATE "C";--> statement-breakpoint
CREATE INDEX "tenant_keys_due_idx" ON "tenant_keys" USING btree ("tenant_id","vtime","key") WHERE queued > 0;--> statement-breakpoint
CREATE INDEX "jobs_key_idx" ON "jobs" USING btree ("tenant_id","key","id") WHERE key IS NOT NULL;--> statement-breakpoint
CREATE INDEX "trigger_queue_key_idx" ON "trigger_queue" USING btree ("tenant_id","type","key","priority" DESC NULLS LAST,"next_attempt_at") WHERE key IS NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_key_printable" CHECK ("jobs"."key" !~ '[[:cntrl:]]');