ALTER TABLE "api_keys" ALTER COLUMN "id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "tenant_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "hash" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "attempts" ALTER COLUMN "trigger_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "attempts" ALTER COLUMN "tenant_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "jobs" ALTER COLUMN "id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "jobs" ALTER COLUMN "tenant_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "jobs" ALTER COLUMN "type" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "jobs" ALTER COLUMN "idempotency_key" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "pools" ALTER COLUMN "type" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "tenant_counters" ALTER COLUMN "tenant_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "tenant_pools" ALTER COLUMN "tenant_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "tenant_pools" ALTER COLUMN "type" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "tenants" ALTER COLUMN "id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "triggers" ALTER COLUMN "id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "triggers" ALTER COLUMN "tenant_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "triggers" ALTER COLUMN "job_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "triggers" ALTER COLUMN "type" SET DATA TYPE text COLLATE "C";