ALTER TABLE "jobs" ADD COLUMN "spread_ms" integer;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "on_busy" text DEFAULT 'queue' NOT NULL;--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "cancel_requested" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "jobs_on_busy_idx" ON "jobs" USING btree ("tenant_id","key") WHERE on_busy <> 'queue' AND status = 'active';