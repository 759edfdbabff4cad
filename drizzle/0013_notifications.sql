CREATE TABLE "notification_channels" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"type" text NOT NULL,
	"url" text,
	"to" text,
	"events" text[],
	"window_seconds" integer DEFAULT 900 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_folds" (
	"channel_id" text COLLATE "C" NOT NULL,
	"subject" text COLLATE "C" NOT NULL,
	"event" text NOT NULL,
	"sent_at" timestamp with time zone NOT NULL,
	"folded" integer DEFAULT 0 NOT NULL,
	"reported" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "notification_folds_channel_id_subject_event_pk" PRIMARY KEY("channel_id","subject","event")
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"channel_id" text COLLATE "C" NOT NULL,
	"event" text NOT NULL,
	"job_id" text COLLATE "C",
	"data" jsonb NOT NULL,
	"folded" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "pause_reason" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "failure_streak" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "notify" jsonb;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "consecutive_failure_limit" integer DEFAULT 15 NOT NULL;--> statement-breakpoint
ALTER TABLE "notification_channels" ADD CONSTRAINT "notification_channels_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "notification_channels_tenant_idx" ON "notification_channels" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE INDEX "notifications_tenant_idx" ON "notifications" USING btree ("tenant_id","id");