-- One index for a job's triggers by instant and for "one scheduled trigger per (job, instant)": the plain
-- (job_id, scheduled_for) index beside the partial unique one cost every claim and settle of a scheduled
-- trigger a second index entry. Manual runs have NULL as the third key, and NULLs are distinct.
DROP INDEX "triggers_job_instant_idx";--> statement-breakpoint
DROP INDEX "triggers_job_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "triggers_job_idx" ON "triggers" USING btree ("job_id","scheduled_for",(CASE WHEN kind = 'scheduled' THEN true END));