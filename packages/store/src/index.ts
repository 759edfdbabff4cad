// @fairway/store: the schema and every SQL statement Fairway runs. Runtime-neutral (Node and Workers);
// the migrator lives in "@fairway/store/node".
export { connectPostgres, query, sql, type Db, type Store } from "./db.ts";
export { withDeadline } from "./guarded-client.ts";
export {
  ALL_TENANTS,
  LAYOUT_NAMES,
  layoutNamed,
  layoutOf,
  oneTenant,
  type Layout,
  type LayoutName,
  type Scope,
  type TenantShares,
} from "./layout/index.ts";
export {
  authenticateKey,
  claim,
  dropSpentLeases,
  expireLostExecutors,
  findExpiredLeases,
  pendingByTenant,
  settle,
} from "./layout/ops.ts";
export type { ClusterNode } from "./sql/cluster-reads.ts";
export { claimReport, settleIn } from "./sql/delegated.ts";
export {
  advancePoolClock,
  type ClaimedTrigger,
  type ClaimInput,
  type ClaimReport,
} from "./sql/claim.ts";
export type { AttemptDetail, Settled, Settlement } from "./sql/settle.ts";
export { renewLeases } from "./sql/renew.ts";
export { releaseClaims, releaseLeases } from "./sql/release.ts";
export type { ExpiredLease } from "./sql/reap.ts";
export { dueCronTenants, materialize } from "./sql/materialize.ts";
export { busyPolicyTenants, cancelRequested, decideBusy, settleCancelled } from "./sql/on-busy.ts";
export { createJob, createJobs, type CreateJobResult, type JobRow, type NewJob } from "./sql/create-job.ts";
export { cancelJob, pauseJob, resumeJob, runJobNow, updateJob, type JobPatch } from "./sql/job-lifecycle.ts";
export { replayTrigger } from "./sql/replay.ts";
export { cancelTrigger, rerunOverride, rerunTrigger, type RerunOverride } from "./sql/trigger-verbs.ts";
export {
  deadLetterGroups,
  lastRuns,
  REPLAY_BATCH,
  replayJobDeadLetters,
  type DeadLetterGroup,
  type LastRun,
} from "./sql/job-health.ts";
export {
  deleteKeyOverride,
  getKeyDefaults,
  getKeyInfo,
  listKeys,
  putKeyOverride,
  setKeyDefaults,
  topKeys,
  type KeyInfo,
  type KeyOverride,
  type KeyPolicy,
} from "./sql/keys.ts";
export {
  createApiKey,
  createTenant,
  getTenant,
  listTenants,
  revokeApiKey,
  revokePortalSessions,
  rotateSigningSecret,
  updateTenant,
  type TenantRow,
} from "./sql/tenants.ts";
export {
  createPlan,
  deletePlan,
  getPlan,
  listPlans,
  OWN_FIELDS,
  planTenantCounts,
  updatePlan,
  type OwnField,
  type OwnValues,
  type PlanInsert,
  type PlanRow,
} from "./sql/plans.ts";
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
export {
  deleteSecret,
  listSecrets,
  missingSecrets,
  putSecret,
  resealSecret,
  sealedSecrets,
  secretsNotSealedWith,
  type SecretInfo,
} from "./sql/secrets.ts";
export { poolStats, setPoolPaused } from "./sql/pool-pause.ts";
export {
  dropOldExecutors,
  heartbeat,
  listExecutors,
  markExecutorStopped,
  type ExecutorPoolLoad,
  type ExecutorRow,
} from "./sql/executors.ts";
export { metricsSnapshot, type MetricsSnapshot } from "./sql/metrics.ts";
export {
  deleteExpiredJobs,
  deleteExpiredTriggers,
  deleteIdleKeys,
  deleteStaleFolds,
  type FoldCursor,
  type RetentionBatch,
  type RetentionCursor,
} from "./sql/retention.ts";
export { markSending } from "./sql/sending.ts";
export { settleAndClaim } from "./sql/hand-off.ts";
export { HANDLER_HEARTBEAT_MS, handlerPoolStatus, handlerPoolTypes, touchHandlerPools } from "./sql/handler-pools.ts";
export {
  COUNT_CAP,
  activityWindow,
  deadLettersByType,
  listDeadLetterSummaries,
  poolOverview,
  searchJobs,
  secretNamesPage,
  tenantOverview,
  type TenantOverview,
} from "./sql/dashboard-reads.ts";
export { activitySeries } from "./sql/activity-reads.ts";
export {
  createChannel,
  deleteChannel,
  getChannel,
  listChannels,
  listNotifications,
  missingChannels,
  NOTIFICATION_EVENTS,
  NOTIFICATION_POOL,
  notificationDelivery,
  notificationStatus,
  shownChannelTarget,
  type ChannelRow,
  type NotificationDelivery,
  type NotificationRow,
} from "./sql/notifications.ts";
export { notifyQuotaExhausted, testChannel } from "./sql/notification-fanout.ts";
export { standbyClaim, type StandbyInput } from "./sql/standby.ts";
export { createDebounced, type DebounceResult, type DebounceState } from "./sql/debounce.ts";
export { cancelBackfill, createBackfill, getBackfill, listBackfills, type BackfillInfo } from "./sql/backfill.ts";
