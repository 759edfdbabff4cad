CREATE TABLE "tenant_counters" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"live_jobs" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tenant_counters" ADD CONSTRAINT "tenant_counters_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;