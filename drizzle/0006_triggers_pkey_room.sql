-- Hand-written: drizzle cannot give a primary key index storage parameters. The same leaf fill as
-- triggers_job_idx (schema.ts, TRIGGER_KEY_FILLFACTOR): room on each leaf page for the claim's and the
-- settle's versions of a trigger. It applies to pages split from now on; existing pages keep their
-- fill until a REINDEX, which an upgrade need not wait for.
ALTER INDEX "triggers_pkey" SET (fillfactor = 50);
