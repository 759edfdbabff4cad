// The distributed layout on a Citus cluster (docs/scaling.md): after the migrations, on a coordinator
// with the citus extension and when asked (MigrateOptions.distribute), the per-tenant tables are
// distributed by tenant, colocated with `tenants` (a tenant's rows of every table live in one shard
// group, on one node), and the small shared tables become reference tables (a copy on every node).
//
// Citus requires a distributed table's primary and unique keys to hold the distribution column, so
// the keys on an id alone gain tenant_id here, and the one foreign key that names no tenant (a
// trigger's job) becomes (tenant_id, job_id). None of this runs on plain PostgreSQL: there the schema is
// exactly what the migrations make. Each step checks what is there first, so it runs again after every
// migration and does only what is left.
import type postgres from "postgres";

type Session = postgres.ReservedSql | postgres.Sql;

/** Tables distributed by their tenant column, colocated with `tenants` (distributed by its id). */
export const DISTRIBUTED_TABLES = [
  "tenant_counters",
  "tenant_pools",
  "jobs",
  "triggers",
  "trigger_queue",
  "tenant_keys",
  "dead_letters",
  "attempt_log",
  "secrets",
  "notification_channels",
  "notifications",
] as const;

/** Small or tenant-less tables, copied to every node: pools (read by every claim), executors
 *  (heartbeats), api_keys (looked up by hash before the tenant is known), leases, success_detail and
 *  notification_folds (no tenant column yet: docs/scaling.md lists what that costs). */
export const REFERENCE_TABLES = [
  "pools",
  "executors",
  "api_keys",
  "leases",
  "success_detail",
  "notification_folds",
] as const;

/** Keys on an id alone that gain the tenant: [table, constraint, columns, storage options]. */
const TENANT_KEYS: ReadonlyArray<readonly [string, string, string, string]> = [
  ["jobs", "jobs_pkey", "tenant_id, id", ""],
  ["triggers", "triggers_pkey", "tenant_id, id", " WITH (fillfactor = 50)"],
  ["trigger_queue", "trigger_queue_pkey", "tenant_id, id", ""],
  ["attempt_log", "attempts_trigger_id_attempt_pk", "tenant_id, trigger_id, attempt", ""],
  ["notification_channels", "notification_channels_pkey", "tenant_id, id", ""],
  ["notifications", "notifications_pkey", "tenant_id, id", ""],
];

/** Whether the current database has the citus extension. */
export async function hasCitus(session: Session): Promise<boolean> {
  const rows = await session.unsafe(`SELECT 1 FROM pg_extension WHERE extname = 'citus'`);
  return rows.length > 0;
}

/** Distribute Fairway's tables on a Citus coordinator; returns false (and changes nothing) where the
 *  citus extension is absent. Idempotent. */
export async function distributeTables(session: Session): Promise<boolean> {
  if (!(await hasCitus(session))) return false;
  const done = new Set(
    (
      await session.unsafe<Array<{ name: string }>>(
        `SELECT logicalrelid::regclass::text AS name FROM pg_dist_partition`,
      )
    ).map((r) => r.name),
  );
  const run = (s: string) => session.unsafe(s);
  // The queue's plpgsql triggers on `triggers` (docs/architecture.md) are carried to its shards.
  await run(`SET citus.enable_unsafe_triggers = on`);
  if (!done.has("triggers")) {
    // A reference table cannot point at a distributed one, nor a distributed key leave out the tenant.
    await run(`ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_tenant_id_tenants_id_fk`);
    await run(`ALTER TABLE triggers DROP CONSTRAINT IF EXISTS triggers_job_id_jobs_id_fk`);
    for (const [table, name, columns, options] of TENANT_KEYS) {
      await run(
        `ALTER TABLE ${table} DROP CONSTRAINT ${name}, ADD CONSTRAINT ${name} PRIMARY KEY (${columns})${options}`,
      );
    }
    await run(`DROP INDEX IF EXISTS triggers_job_idx`);
    await run(
      `CREATE UNIQUE INDEX triggers_job_idx ON triggers
         (job_id, scheduled_for, (CASE WHEN kind = 'scheduled' THEN true END), tenant_id) WITH (fillfactor = 50)`,
    );
    await run(
      `ALTER TABLE triggers ADD CONSTRAINT triggers_job_fk FOREIGN KEY (tenant_id, job_id)
         REFERENCES jobs (tenant_id, id) ON DELETE CASCADE`,
    );
  }
  for (const t of REFERENCE_TABLES) if (!done.has(t)) await run(`SELECT create_reference_table('${t}')`);
  if (!done.has("tenants")) await run(`SELECT create_distributed_table('tenants', 'id')`);
  for (const t of DISTRIBUTED_TABLES) {
    if (!done.has(t)) await run(`SELECT create_distributed_table('${t}', 'tenant_id', colocate_with => 'tenants')`);
  }
  await run(`RESET citus.enable_unsafe_triggers`);
  return true;
}
