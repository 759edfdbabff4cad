ALTER TABLE "jobs" ADD COLUMN "tags" jsonb;--> statement-breakpoint
CREATE INDEX "jobs_tags_idx" ON "jobs" USING gin ("tags" jsonb_path_ops) WHERE tags IS NOT NULL;