CREATE TABLE "executors" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"host" text NOT NULL,
	"pid" integer NOT NULL,
	"version" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"heartbeat_at" timestamp with time zone NOT NULL,
	"heartbeat_timeout_ms" integer NOT NULL,
	"pools" jsonb NOT NULL,
	"stopped_at" timestamp with time zone,
	"lost_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "delivery" text DEFAULT 'at_least_once' NOT NULL;--> statement-breakpoint
ALTER TABLE "pools" ADD COLUMN "paused" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "history_retention_days" integer DEFAULT 30 NOT NULL;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "dead_retention_days" integer DEFAULT 90 NOT NULL;--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "sending_attempt" integer;