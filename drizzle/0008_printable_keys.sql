ALTER TABLE "jobs" ADD CONSTRAINT "jobs_id_printable" CHECK ("jobs"."id" !~ '[[:cntrl:]]');--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_type_printable" CHECK ("jobs"."type" !~ '[[:cntrl:]]');--> statement-breakpoint
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_id_printable" CHECK ("tenants"."id" !~ '[[:cntrl:]]');