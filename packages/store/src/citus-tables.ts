// The tables of the distributed layout by kind (citus.ts; docs/scaling.md, "The distributed layout").

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
  "debounces",
  "backfills",
  "leases",
  "success_detail",
  "notification_folds",
] as const;

/** Small shared tables, copied to every node: pools (read by every claim, written by operators),
 *  api_keys (looked up by hash before the tenant is known) and plans (quota tiers, read and locked by
 *  tenant and plan writes, never by the claim). A write to one is a transaction on every node, so
 *  nothing on the hot path writes them. `executors` (a heartbeat every
 *  few seconds from every executor) stays a plain table of the coordinator: as a reference table, one
 *  worker down would stop every heartbeat. */
export const REFERENCE_TABLES = ["pools", "api_keys", "plans"] as const;
