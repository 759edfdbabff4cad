ALTER TABLE "attempts" DROP CONSTRAINT "attempts_trigger_id_triggers_id_fk";
--> statement-breakpoint
DROP INDEX "attempts_trigger_attempt_idx";--> statement-breakpoint
DROP INDEX "triggers_lease_idx";--> statement-breakpoint
ALTER TABLE "attempts" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "attempts" ADD CONSTRAINT "attempts_trigger_id_attempt_pk" PRIMARY KEY("trigger_id","attempt");
