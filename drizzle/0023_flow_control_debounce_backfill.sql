CREATE TABLE "backfills" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"job_id" text COLLATE "C" NOT NULL,
	"from_at" timestamp with time zone NOT NULL,
	"to_at" timestamp with time zone NOT NULL,
	"overlap" text NOT NULL,
	"fires" integer NOT NULL,
	"skipped" integer NOT NULL,
	"cancelled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "debounces" (
	"tenant_id" text COLLATE "C" NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"job_id" text COLLATE "C" NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "debounces_tenant_id_key_pk" PRIMARY KEY("tenant_id","key"),
	CONSTRAINT "debounces_key_printable" CHECK ("debounces"."key" !~ '[[:cntrl:]]')
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "debounce" jsonb;--> statement-breakpoint
ALTER TABLE "triggers" ADD COLUMN "backfill_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "backfills" ADD CONSTRAINT "backfills_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "backfills" ADD CONSTRAINT "backfills_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "debounces" ADD CONSTRAINT "debounces_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "backfills_job_idx" ON "backfills" USING btree ("job_id","id");--> statement-breakpoint
CREATE INDEX "triggers_backfill_idx" ON "triggers" USING btree ("backfill_id") WHERE backfill_id IS NOT NULL;