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
import { DISTRIBUTED_TABLES, REFERENCE_TABLES } from "./citus-tables.ts";
import { delegatedFunctions } from "./sql/delegated.ts";
import { QUEUE_FUNCTIONS } from "./sql/queue-functions.ts";

type Session = postgres.ReservedSql | postgres.Sql;

export { DISTRIBUTED_TABLES, REFERENCE_TABLES };

/** Keys on an id alone that gain the tenant: [table, constraint, columns, storage options]. */
const TENANT_KEYS: ReadonlyArray<readonly [string, string, string, string]> = [
  ["jobs", "jobs_pkey", "tenant_id, id", ""],
  ["triggers", "triggers_pkey", "tenant_id, id", " WITH (fillfactor = 50)"],
  ["trigger_queue", "trigger_queue_pkey", "tenant_id, id", ""],
  ["attempt_log", "attempts_trigger_id_attempt_pk", "tenant_id, trigger_id, attempt", ""],
  ["notification_channels", "notification_channels_pkey", "tenant_id, id", ""],
  ["notifications", "notifications_pkey", "tenant_id, id", ""],
];

/** Whether this session's database already has the distributed layout. */
export async function hasDistributedLayout(session: Session): Promise<boolean> {
  if (!(await hasCitus(session))) return false;
  const rows = await session.unsafe(`SELECT 1 FROM pg_dist_partition WHERE logicalrelid::text = 'triggers'`);
  return rows.length > 0;
}

/** Whether the current database has the citus extension. */
async function hasCitus(session: Session): Promise<boolean> {
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
  if (!done.has("backfills")) {
    // A backfill's job, like a trigger's, is named with its tenant (below, once jobs is keyed so).
    await run(`ALTER TABLE backfills DROP CONSTRAINT IF EXISTS backfills_job_id_jobs_id_fk`);
    await run(
      `ALTER TABLE backfills DROP CONSTRAINT backfills_pkey, ADD CONSTRAINT backfills_pkey PRIMARY KEY (tenant_id, id)`,
    );
  }
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
  if (!done.has("backfills")) {
    await run(
      `ALTER TABLE backfills ADD CONSTRAINT backfills_job_fk FOREIGN KEY (tenant_id, job_id)
         REFERENCES jobs (tenant_id, id) ON DELETE CASCADE`,
    );
  }
  if (!done.has("leases")) {
    // A lease row per tenant of a claim: a claim across tenants (made before the layout) is split.
    await run(`ALTER TABLE leases DROP CONSTRAINT leases_pkey`);
    await run(
      `INSERT INTO leases (token, tenant_id, owner, expires_at, trigger_ids)
       SELECT l.token, t.tenant_id, l.owner, l.expires_at, array_agg(t.id)
         FROM leases l JOIN triggers t ON t.id = ANY (l.trigger_ids) AND t.lease_token = l.token
        WHERE l.tenant_id IS NULL GROUP BY l.token, t.tenant_id, l.owner, l.expires_at`,
    );
    await run(`DELETE FROM leases WHERE tenant_id IS NULL`);
    await run(`ALTER TABLE leases ADD CONSTRAINT leases_pkey PRIMARY KEY (tenant_id, token)`);
  }
  if (!done.has("success_detail")) {
    await run(
      `UPDATE success_detail s SET tenant_id = t.tenant_id FROM triggers t WHERE t.id = s.trigger_id AND s.tenant_id IS NULL`,
    );
    await run(`DELETE FROM success_detail WHERE tenant_id IS NULL`);
    await run(
      `ALTER TABLE success_detail DROP CONSTRAINT success_detail_pkey, ADD CONSTRAINT success_detail_pkey PRIMARY KEY (tenant_id, trigger_id)`,
    );
  }
  // A layout made when these were reference tables: executors back to the coordinator for good, the
  // others until they are distributed below.
  for (const t of ["executors", "leases", "success_detail", "notification_folds"]) {
    if (!done.has(t)) continue;
    const [row] = await session.unsafe<Array<{ kind: string }>>(
      `SELECT citus_table_type AS kind FROM citus_tables WHERE table_name = '${t}'::regclass`,
    );
    if (row?.kind === "reference") {
      await run(`SELECT undistribute_table('${t}')`);
      done.delete(t);
    }
  }
  if (!done.has("notification_folds")) {
    // A settle's fold is written at its tenant (the channel's): rows of channels since deleted go.
    await run(
      `UPDATE notification_folds f SET tenant_id = c.tenant_id FROM notification_channels c
        WHERE c.id = f.channel_id AND f.tenant_id IS NULL`,
    );
    await run(`DELETE FROM notification_folds WHERE tenant_id IS NULL`);
    await run(
      `ALTER TABLE notification_folds DROP CONSTRAINT notification_folds_channel_id_subject_event_pk,
         ADD CONSTRAINT notification_folds_channel_id_subject_event_pk PRIMARY KEY (tenant_id, channel_id, subject, event)`,
    );
  }
  for (const t of REFERENCE_TABLES) if (!done.has(t)) await run(`SELECT create_reference_table('${t}')`);
  if (!done.has("tenants")) await run(`SELECT create_distributed_table('tenants', 'id')`);
  for (const t of DISTRIBUTED_TABLES) {
    if (!done.has(t)) await run(`SELECT create_distributed_table('${t}', 'tenant_id', colocate_with => 'tenants')`);
  }
  // After every migration: one that redefines the plain functions is followed by these again.
  for (const f of QUEUE_FUNCTIONS) await run(f.clusterText);
  // A tenant's claim and settle as one call (sql/delegated.ts), sent whole to the tenant's node: each
  // is distributed by its tenant argument, colocated with `tenants`. (Citus records every function
  // made on the coordinator as an object it copies to the workers; distributed by an argument is what
  // makes it send the call itself.) The cluster's text runs the statements on the node's own shards
  // (sql/shard-local.ts); it replaces the migrations' after every migration, as the queue's do.
  for (const f of delegatedFunctions()) {
    await run(f.clusterText);
    const known = await session.unsafe(
      `SELECT 1 FROM pg_dist_object WHERE classid = 'pg_proc'::regclass AND objid = '${f.signature}'::regprocedure
          AND distribution_argument_index IS NOT NULL`,
    );
    if (known.length === 0) {
      await run(
        `SELECT create_distributed_function('${f.signature}', distribution_arg_name => 'p_tenant', colocate_with => 'tenants')`,
      );
    }
  }
  await run(`RESET citus.enable_unsafe_triggers`);
  return true;
}
