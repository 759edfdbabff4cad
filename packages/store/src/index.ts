// @fairway/store: the schema and every SQL statement Fairway runs. Runtime-neutral (Node and Workers);
// the migrator lives in "@fairway/store/node".
export { connectPostgres, pipelineTx, query, rowsOf, sql, type Db, type Store } from "./db.ts";
export * as schema from "./schema.ts";
export {
  claim,
  claimReport,
  claimStatements,
  dueScanCap,
  fairOrder,
  type ClaimedTrigger,
  type ClaimInput,
  type ClaimReport,
} from "./sql/claim.ts";
export { settle, type AttemptDetail, type Settled, type Settlement } from "./sql/settle.ts";
export { renewLeases } from "./sql/renew.ts";
export { releaseLeases } from "./sql/release.ts";
export { dropSpentLeases, findExpiredLeases, type ExpiredLease } from "./sql/reap.ts";
export { materialize } from "./sql/materialize.ts";
export { createJob, type CreateJobResult, type JobRow, type NewJob } from "./sql/create-job.ts";
export { cancelJob, pauseJob, resumeJob, runJobNow, updateJob, type JobPatch } from "./sql/job-lifecycle.ts";
export { replayTrigger } from "./sql/replay.ts";
export {
  authenticateKey,
  createApiKey,
  createTenant,
  getTenant,
  listTenants,
  revokeApiKey,
  rotateSigningSecret,
  updateTenant,
  type TenantRow,
} from "./sql/tenants.ts";
export { DEFAULT_POOL, findPool, getPool, listPools, putPool, type PoolConfig } from "./sql/pools.ts";
export {
  allTenantUsage,
  getJob,
  getTrigger,
  listDeadLetters,
  listJobs,
  listTriggers,
  tenantUsage,
  type AttemptRow,
  type TriggerRow,
} from "./sql/reads.ts";
export { pendingByTenant } from "./sql/ready-index.ts";
export * from "./sql/secrets.ts";
export * from "./sql/pool-pause.ts";
export * from "./sql/executors.ts";
export * from "./sql/metrics.ts";
export * from "./sql/retention.ts";
export * from "./sql/sending.ts";
export * from "./sql/hand-off.ts";
export { standbyClaim, type StandbyInput } from "./sql/standby.ts";
export * from "./sql/handler-pools.ts";
export * from "./sql/dashboard-reads.ts";
