ALTER TABLE "triggers" ADD COLUMN "rerun_of" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "override" jsonb;