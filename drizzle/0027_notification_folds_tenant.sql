ALTER TABLE "notification_folds" ADD COLUMN "tenant_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "notification_folds" ADD COLUMN "window_seconds" integer;--> statement-breakpoint
-- Hand-written: the rows written before the column, given their channel's tenant (the fold writes it).
-- On a Citus coordinator (folds a reference table, channels distributed) the layout step does it instead.
DO $$
DECLARE citus_table int;
BEGIN
  IF to_regclass('pg_dist_partition') IS NOT NULL THEN
    EXECUTE 'SELECT 1 FROM pg_dist_partition WHERE logicalrelid::text = ''notification_folds''' INTO citus_table;
    IF citus_table IS NOT NULL THEN RETURN; END IF;
  END IF;
  UPDATE "notification_folds" f SET "tenant_id" = c."tenant_id" FROM "notification_channels" c
   WHERE c."id" = f."channel_id" AND f."tenant_id" IS NULL;
END $$;
