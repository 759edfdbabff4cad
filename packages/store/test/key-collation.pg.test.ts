// Key columns compare byte by byte (schema.ts `key`, migration 0004). Every btree index on a text
// column compares keys on each insert and lookup; under the database's linguistic collation that is a
// strcoll call per comparison. What must hold: every text column in an index or a foreign key is
// COLLATE "C". A new key column declared with text() fails here; so would one left behind, whose
// joins with the others would mix two collations and could not use the other side's index.
import { expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";

const pg = useTestDb();

it('every text column in an index or a foreign key is COLLATE "C"', async () => {
  const rows = await query<{ col: string; collation: string }>(
    pg.db,
    sql`
    WITH keyed AS (
      SELECT i.indrelid AS rel, k.attnum FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) AS k(attnum)
      UNION
      SELECT c.conrelid, k.attnum FROM pg_constraint c CROSS JOIN LATERAL unnest(c.conkey) AS k(attnum) WHERE c.contype = 'f'
    )
    SELECT DISTINCT r.relname || '.' || a.attname AS col, co.collname AS collation
      FROM keyed JOIN pg_class r ON r.oid = keyed.rel
      JOIN pg_namespace n ON n.oid = r.relnamespace AND n.nspname = 'public'
      JOIN pg_attribute a ON a.attrelid = keyed.rel AND a.attnum = keyed.attnum
      JOIN pg_collation co ON co.oid = a.attcollation
     WHERE a.atttypid = 'text'::regtype AND r.relname NOT LIKE '\\_\\_%'
     ORDER BY 1`,
  );
  // The list itself guards against a schema change that drops keys from it unnoticed.
  expect(rows.map((r) => r.col)).toEqual([
    "api_keys.hash",
    "api_keys.id",
    "api_keys.tenant_id",
    "attempt_log.trigger_id",
    "backfills.id",
    "backfills.job_id",
    "backfills.tenant_id",
    "dead_letters.tenant_id",
    "dead_letters.trigger_id",
    "debounces.key",
    "debounces.tenant_id",
    "executors.id",
    "jobs.id",
    "jobs.idempotency_key",
    "jobs.key",
    "jobs.tenant_id",
    "leases.token",
    "notification_channels.id",
    "notification_channels.tenant_id",
    "notification_folds.channel_id",
    "notification_folds.event",
    "notification_folds.subject",
    "notifications.id",
    "notifications.tenant_id",
    "plans.id",
    "pools.type",
    "secrets.name",
    "secrets.tenant_id",
    "success_detail.trigger_id",
    "tenant_counters.tenant_id",
    "tenant_keys.key",
    "tenant_keys.tenant_id",
    "tenant_pools.tenant_id",
    "tenant_pools.type",
    "tenants.id",
    "tenants.plan_id",
    "trigger_queue.id",
    "trigger_queue.key",
    "trigger_queue.tenant_id",
    "trigger_queue.type",
    "triggers.backfill_id",
    "triggers.id",
    "triggers.job_id",
    "triggers.tenant_id",
  ]);
  expect(rows.filter((r) => r.collation !== "C")).toEqual([]);
});
