CREATE TABLE "plans" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"name" text,
	"max_in_flight" integer,
	"weight" double precision,
	"rate_per_second" double precision,
	"burst" integer,
	"max_jobs" integer,
	"max_payload_bytes" integer,
	"history_days" integer,
	"key_max_in_flight" integer,
	"key_rate_per_second" double precision,
	"key_weight" double precision,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plans_id_printable" CHECK ("plans"."id" !~ '[[:cntrl:]]')
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "plan_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "own" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX "tenants_plan_idx" ON "tenants" USING btree ("plan_id");--> statement-breakpoint
-- Hand-written: a tenant's quota values from before plans are its own where they differ from the
-- defaults (a default-valued field then takes a plan's value once the tenant is given one).
UPDATE "tenants" SET "own" = jsonb_strip_nulls(jsonb_build_object(
  'maxInFlight', NULLIF("max_in_flight", 10),
  'weight', NULLIF("weight", 1),
  'ratePerSecond', "rate_per_second",
  'burst', "burst",
  'maxJobs', NULLIF("max_jobs", 10000),
  'maxPayloadBytes', NULLIF("max_payload_bytes", 262144),
  'historyRetentionDays', NULLIF("history_retention_days", 30),
  'keyMaxInFlight', "key_max_in_flight",
  'keyRatePerSecond', "key_rate_per_second",
  'keyWeight', NULLIF("key_weight", 1)
));
