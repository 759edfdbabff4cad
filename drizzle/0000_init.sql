CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"trigger_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"outcome" text NOT NULL,
	"http_status" integer,
	"error" text,
	"response_body" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"cron" text,
	"timezone" text,
	"run_at" timestamp with time zone,
	"target" jsonb,
	"payload" jsonb,
	"max_attempts" integer NOT NULL,
	"initial_delay_ms" integer NOT NULL,
	"max_delay_ms" integer NOT NULL,
	"timeout_ms" integer,
	"priority" integer DEFAULT 0 NOT NULL,
	"overlap" text DEFAULT 'allow' NOT NULL,
	"misfire" text DEFAULT 'fire_once' NOT NULL,
	"catchup_window_ms" integer DEFAULT 86400000 NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"next_fire_at" timestamp with time zone,
	"idempotency_key" text,
	"idempotency_hash" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pools" (
	"type" text PRIMARY KEY NOT NULL,
	"concurrency" integer DEFAULT 50 NOT NULL,
	"timeout_ms" integer DEFAULT 30000 NOT NULL,
	"lease_ms" integer DEFAULT 60000 NOT NULL,
	"max_attempts" integer DEFAULT 5 NOT NULL,
	"initial_delay_ms" integer DEFAULT 1000 NOT NULL,
	"max_delay_ms" integer DEFAULT 3600000 NOT NULL,
	"vclock" double precision DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tenant_pools" (
	"tenant_id" text NOT NULL,
	"type" text NOT NULL,
	"vtime" double precision DEFAULT 0 NOT NULL,
	"cost_ms" double precision DEFAULT 100 NOT NULL,
	CONSTRAINT "tenant_pools_tenant_id_type_pk" PRIMARY KEY("tenant_id","type")
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"max_in_flight" integer DEFAULT 10 NOT NULL,
	"weight" double precision DEFAULT 1 NOT NULL,
	"rate_per_second" double precision,
	"burst" integer,
	"rate_tokens" double precision,
	"rate_updated_at" timestamp with time zone,
	"max_jobs" integer DEFAULT 10000 NOT NULL,
	"max_payload_bytes" integer DEFAULT 262144 NOT NULL,
	"signing_secret" text NOT NULL,
	"previous_signing_secret" text,
	"previous_secret_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "triggers" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"job_id" text NOT NULL,
	"type" text NOT NULL,
	"kind" text DEFAULT 'scheduled' NOT NULL,
	"scheduled_for" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL,
	"exclusive" boolean DEFAULT false NOT NULL,
	"attempt_count" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"lease_owner" text,
	"lease_token" text,
	"lease_expires_at" timestamp with time zone,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "attempts" ADD CONSTRAINT "attempts_trigger_id_triggers_id_fk" FOREIGN KEY ("trigger_id") REFERENCES "public"."triggers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tenant_pools" ADD CONSTRAINT "tenant_pools_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "triggers" ADD CONSTRAINT "triggers_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "triggers" ADD CONSTRAINT "triggers_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_idx" ON "api_keys" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "api_keys_tenant_idx" ON "api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "attempts_trigger_attempt_idx" ON "attempts" USING btree ("trigger_id","attempt");--> statement-breakpoint
CREATE INDEX "jobs_tenant_idx" ON "jobs" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_idempotency_idx" ON "jobs" USING btree ("tenant_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "jobs_due_cron_idx" ON "jobs" USING btree ("next_fire_at") WHERE status = 'active' and cron is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "triggers_job_instant_idx" ON "triggers" USING btree ("job_id","scheduled_for") WHERE kind = 'scheduled';--> statement-breakpoint
CREATE INDEX "triggers_job_idx" ON "triggers" USING btree ("job_id","scheduled_for");--> statement-breakpoint
CREATE INDEX "triggers_claim_idx" ON "triggers" USING btree ("tenant_id","type","priority" DESC NULLS LAST,"next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "triggers_pending_type_idx" ON "triggers" USING btree ("type","tenant_id","next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "triggers_running_idx" ON "triggers" USING btree ("tenant_id","lease_expires_at") WHERE status = 'running';--> statement-breakpoint
CREATE INDEX "triggers_lease_idx" ON "triggers" USING btree ("lease_expires_at") WHERE status = 'running';--> statement-breakpoint
CREATE INDEX "triggers_dead_idx" ON "triggers" USING btree ("tenant_id","id") WHERE status = 'dead';