// The API's shapes, as the SDK's users see them. Dates are ISO-8601 strings on the wire. They are
// checked against the API's own zod schemas by test/packages/sdk-types.ts, so the two cannot drift.

export type JobStatus = "active" | "paused" | "completed" | "failed" | "cancelled";
export type TriggerStatus = "pending" | "running" | "succeeded" | "dead" | "skipped" | "cancelled" | "unknown";
export type OverlapPolicy = "allow" | "skip" | "buffer_one";
/** What a due trigger does while the job's fairness key is at its cap (needs a key). */
export type OnBusyPolicy = "queue" | "skip" | "replace_queued" | "cancel_running";
export type MisfirePolicy = "fire_once" | "skip" | "fire_all";
export type TenantStatus = "active" | "suspended";
export type AttemptOutcome =
  | "success"
  | "http_error"
  | "network_error"
  | "timeout"
  | "handler_error"
  | "lease_expired"
  | "secret_missing"
  | "forbidden_target"
  | "lost_in_flight"
  | "cancelled";

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type HttpMethod = "POST" | "PUT" | "PATCH" | "GET" | "HEAD" | "DELETE";
export type BackoffStrategy = "exponential" | "linear" | "fixed";
export type JitterMode = "full" | "none";
export type DeliveryMode = "at_least_once" | "at_most_once";

/** Where a job delivers. `${secrets.NAME}` in `url`, header values and the string parts of `body` is
 *  replaced by the tenant's secret at delivery (and kept as the placeholder everywhere it is shown). */
export interface TargetInput {
  url: string;
  /** Default POST. GET and HEAD carry no body. */
  method?: HttpMethod;
  /** May set content-type; Fairway's own headers (webhook-*, fairway-*, user-agent…) cannot be set. */
  headers?: Record<string, string>;
  /** Sent verbatim: a string as is (text/plain unless headers say otherwise), any other JSON value as
   *  application/json. Absent: the delivery envelope {id, jobId, jobName, scheduledFor, attempt, payload}. */
  body?: JsonValue;
}

export interface RetryInput {
  maxAttempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Default exponential (initial·2^(n−1)); linear (initial·n); fixed (initial). Always capped by maxDelayMs. */
  backoff?: BackoffStrategy;
  /** Default full (uniform in [0, delay)); none. */
  jitter?: JitterMode;
}

/** A request as an attempt records it: as sent, secrets as their placeholders, the body cut at a bound. */
export interface AttemptRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
  truncated?: true;
}

/** `spread` (cron only): an ISO 8601 duration, e.g. "PT10M"; each fire is offset within it by a fixed
 *  amount derived from the job's id. */
export type ScheduleInput =
  | { cron: string; timezone?: string; spread?: string }
  | { at: string | Date }
  | { delayMs: number };

export interface CreateJobInput<P = unknown> {
  name: string;
  /** The fairness key (1-128 characters, no control characters): inside the tenant, work is shared
   *  by key weights over worker time, and each key's cap and rate apply. Absent: no key. */
  key?: string;
  /** The pool. Default "webhook". A type served by a worker (createWorker) needs no target. */
  type?: string;
  schedule: ScheduleInput;
  target?: TargetInput;
  payload?: P;
  retry?: RetryInput;
  timeoutMs?: number;
  priority?: number;
  overlap?: OverlapPolicy;
  onBusy?: OnBusyPolicy;
  misfire?: MisfirePolicy;
  catchupWindowMs?: number;
  /** Default at_least_once. at_most_once: never sent twice; a delivery that may have arrived ends `unknown`. */
  delivery?: DeliveryMode;
  /** Which notification channels hear about this job's failures: absent for all of the tenant's, false
   *  for none, or the channel ids. */
  notify?: JobNotify;
  /** Your labels, { name: value }: at most 10, names 1-64 characters of a-z 0-9 _ . : -, values at
   *  most 256 characters. Filter with jobs.list({ tags }); the delivery envelope carries them. */
  tags?: Record<string, string>;
  /** One-time jobs only: creates with the same debounce key within periodMs fold into one job.
   *  Trailing (default): one pending job (its payload and target the latest's), which fires periodMs
   *  after the latest create, never later than maxWaitMs after the first. Leading: the first create
   *  fires at once and the rest of the burst is folded into it without firing. */
  debounce?: DebounceInput;
}

export interface DebounceInput {
  key: string;
  periodMs: number;
  maxWaitMs?: number;
  /** Default trailing. */
  mode?: "trailing" | "leading";
}

export type JobNotify = false | { channels: string[] };

/** A JSON Merge Patch (RFC 7396) of a job: absent fields keep their value, nested objects merge (so
 *  `{ schedule: { cron } }` keeps the time zone, `{ target: { method } }` keeps the URL), and null
 *  clears a field that may be cleared (payload, timeoutMs, retry, a header). */
export type MergePatch<T> = { [K in keyof T]?: (T[K] extends object ? MergePatch<T[K]> | T[K] : T[K]) | null };
export type UpdateJobInput<P = unknown> = MergePatch<
  Omit<CreateJobInput<P>, "type" | "schedule" | "debounce" | "tags">
> & {
  schedule?:
    | { cron?: string; timezone?: string | null; spread?: string | null }
    | { at: string | Date }
    | { delayMs: number };
  /** Merged into the job's tags: a value sets one, null removes one; null for the whole removes all. */
  tags?: Record<string, string | null> | null;
};

export interface ListJobsOptions {
  limit?: number;
  cursor?: string;
  /** One status; without it every status but cancelled. */
  status?: JobStatus;
  type?: string;
  name?: string;
  /** Only jobs with exactly this fairness key. */
  key?: string;
  /** Only jobs with every one of these tags. */
  tags?: Record<string, string>;
  /** true: only failing jobs (failureStreak > 0); false: only the others. */
  failing?: boolean;
}

/** What a job's latest tried fire came to: failed = its last attempt failed and a retry is pending;
 *  dead_lettered = its retries ran out; unknown = an at-most-once delivery lost in flight; cancelled =
 *  it ran and was cut or cancelled (onBusy cancel_running, a pause, a delete). */
export type LastOutcome = "succeeded" | "failed" | "dead_lettered" | "unknown" | "cancelled";

export interface Job<P = unknown> {
  id: string;
  name: string;
  type: string;
  /** Its fairness key; null: none. */
  key: string | null;
  status: JobStatus;
  /** Why Fairway paused it: http_410, consecutive_failures or schedule_not_computable; null otherwise. */
  pauseReason: string | null;
  schedule: { cron: string; timezone: string; spread?: string } | { at: string };
  target: { url: string; method: HttpMethod; headers?: Record<string, string>; body?: unknown } | null;
  payload: P | null;
  retry: Required<RetryInput>;
  timeoutMs: number | null;
  priority: number;
  overlap: OverlapPolicy;
  onBusy: OnBusyPolicy;
  misfire: MisfirePolicy;
  catchupWindowMs: number;
  delivery: DeliveryMode;
  /** null: every channel of the tenant hears about it. */
  notify: JobNotify | null;
  /** Its tags ({} for none). */
  tags: Record<string, string>;
  nextFireAt: string | null;
  /** Fires in a row that ended dead since its last success or resume; 0 when healthy. */
  failureStreak: number;
  /** On list and get: its latest tried fire's outcome and when; null: never tried. */
  lastRun?: { outcome: LastOutcome; at: string } | null;
  /** On GET /v1/jobs/:id for cron jobs: the next 5 fire instants. */
  nextFires?: string[];
  /** On create: true when a one-time job's instant had already passed, so it fires at once. */
  firesImmediately?: boolean;
  /** A debounced job: its debounce and how many later creates it folded; null for any other job. */
  debounce: {
    key: string;
    periodMs: number;
    maxWaitMs: number | null;
    mode: "trailing" | "leading";
    folded: number;
  } | null;
  /** On a create with debounce: the job it joined (HTTP 200), or null for a new job (201). */
  debounced?: { joined: string | null; folded: number };
  createdAt: string;
  updatedAt: string;
}

export interface Attempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  outcome: AttemptOutcome;
  httpStatus: number | null;
  error: string | null;
  responseBody: string | null;
  /** The request as sent, secrets as their `${secrets.NAME}` placeholders, body cut at 8 KiB. */
  request: AttemptRequest | null;
  /** The response, its body cut at the pool's maxResponseBytes (`truncated`). */
  response: { status: number; headers: Record<string, string>; body: string; truncated: boolean } | null;
}

export interface Trigger {
  id: string;
  jobId: string;
  /** Its job's fairness key when it was made; null: none. */
  key: string | null;
  kind: "scheduled" | "manual" | "backfill" | "rerun";
  /** The backfill that made it; null otherwise. */
  backfillId: string | null;
  /** The finished trigger it re-runs (kind rerun); null otherwise. */
  rerunOf: string | null;
  scheduledFor: string;
  status: TriggerStatus;
  reason: string | null;
  attemptCount: number;
  maxAttempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
  finishedAt: string | null;
  triggeredBy: "schedule" | "manual" | "replay" | "backfill" | "rerun";
  attempts?: Attempt[];
}

/** POST /v1/jobs/batch: one result per item, in input order: 201 created, 200 the job its
 *  idempotencyKey already made, or a refusal as a single create would get it (400, 409, 413). */
export interface JobBatchResult<P = unknown> {
  results: Array<
    | { index: number; status: 200 | 201; job: Job<P> }
    | {
        index: number;
        status: number;
        error: { code: string; message: string; details?: Array<{ path: string; message: string }> };
      }
  >;
}

/** POST /v1/triggers/{id}/rerun: what the re-run sends instead of its job's, for that run alone. */
export interface RerunInput {
  /** The envelope's payload. */
  payload?: JsonValue;
  /** A request target's body (a job whose target has a body): text, or JSON. */
  body?: JsonValue;
}

/** A dead letter: the trigger, its job's name and type, and how its last attempt ended. */
export interface DeadLetter extends Trigger {
  jobName: string;
  jobType: string;
  lastAttempt: { outcome: AttemptOutcome; httpStatus: number | null; error: string | null } | null;
}

/** POST /v1/dead-letters/replay: one call's batch (at most 100) of a job's dead letters. */
export interface DeadLetterReplay {
  jobId: string;
  replayed: number;
  triggerIds: string[];
  /** Still dead: call again while above 0 (`replayAllDeadLetters` does). */
  remaining: number;
}

export interface Secret {
  name: string;
  createdAt: string;
  updatedAt: string;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface Quota {
  limits: {
    maxInFlight: number;
    weight: number;
    ratePerSecond: number | null;
    burst: number | null;
    maxJobs: number;
    maxPayloadBytes: number;
    historyRetentionDays: number;
    deadRetentionDays: number;
    consecutiveFailureLimit: number;
  };
  usage: { running: number; due: number; pending: number; jobs: number; dead: number; oldestDueLagMs: number | null };
}

export interface TenantQuotas {
  /** Whole number, 1-100000. */
  maxInFlight?: number;
  /** 0.01-1000. */
  weight?: number;
  /** 0.01-100000 a second, or null for no rate limit. */
  ratePerSecond?: number | null;
  /** Whole number, 1-1000000, or null for max(1, ratePerSecond). */
  burst?: number | null;
  maxJobs?: number;
  maxPayloadBytes?: number;
  /** Days finished triggers and one-time jobs are kept (default 30), and dead ones (default 90). */
  historyRetentionDays?: number;
  deadRetentionDays?: number;
  /** A job whose last this-many triggers all dead-lettered is paused (consecutive_failures). Default 15; 0 = never. */
  consecutiveFailureLimit?: number;
}

/** The quota a plan governs, as in force for a tenant: its own value, else its plan's, else the default. */
export interface EffectiveQuota {
  maxInFlight: number;
  weight: number;
  ratePerSecond: number | null;
  burst: number | null;
  maxJobs: number;
  maxPayloadBytes: number;
  historyRetentionDays: number;
  keyDefaults: { maxInFlight: number | null; ratePerSecond: number | null; weight: number };
}

/** The values set on a tenant itself (they win over its plan's): only the fields it sets. */
export interface TenantOverrides {
  maxInFlight?: number;
  weight?: number;
  ratePerSecond?: number;
  burst?: number;
  maxJobs?: number;
  maxPayloadBytes?: number;
  historyRetentionDays?: number;
  keyDefaults?: { maxInFlight?: number; ratePerSecond?: number; weight?: number };
}

/** The quota fields at the top are the effective ones, as in `effective`. */
export interface Tenant extends Required<TenantQuotas> {
  id: string;
  name: string;
  status: TenantStatus;
  /** The tenant's quota plan (null: none). */
  plan: string | null;
  effective: EffectiveQuota;
  overrides: TenantOverrides;
  createdAt: string;
  updatedAt: string;
}

/** A quota plan: its tenants take these values where they set none of their own; null: the plan sets
 *  nothing there (the default applies). */
export interface Plan {
  id: string;
  name: string | null;
  maxInFlight: number | null;
  weight: number | null;
  ratePerSecond: number | null;
  burst: number | null;
  maxJobs: number | null;
  maxPayloadBytes: number | null;
  /** Days finished history is kept (a tenant's historyRetentionDays). */
  historyDays: number | null;
  keyDefaults: { maxInFlight: number | null; ratePerSecond: number | null; weight: number | null };
  /** How many tenants are on the plan. */
  tenants: number;
  createdAt: string;
  updatedAt: string;
}

/** POST /v1/admin/plans: every field but the id optional. */
export interface CreatePlanInput {
  id: string;
  name?: string;
  maxInFlight?: number;
  weight?: number;
  ratePerSecond?: number | null;
  burst?: number | null;
  maxJobs?: number;
  maxPayloadBytes?: number;
  historyDays?: number;
  keyDefaults?: { maxInFlight?: number; ratePerSecond?: number; weight?: number };
}

/** PATCH /v1/admin/plans/{id} (JSON Merge Patch): null removes a value (the default applies). */
export type PlanPatch = {
  [K in Exclude<keyof CreatePlanInput, "id" | "keyDefaults">]?: CreatePlanInput[K] | null;
} & { keyDefaults?: { maxInFlight?: number | null; ratePerSecond?: number | null; weight?: number | null } | null };

export interface PoolConfig {
  type: string;
  concurrency: number;
  timeoutMs: number;
  leaseMs: number;
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  backoff: BackoffStrategy;
  jitter: JitterMode;
  /** Response bytes an attempt keeps. Default 65536, at most 1048576. */
  maxResponseBytes: number;
  /** Paused: nothing of this type is claimed (POST /v1/admin/pools/:type/pause | resume). */
  paused: boolean;
}

export interface ApiKey {
  id: string;
  /** The key itself: shown once, never again. */
  key: string;
  prefix: string;
  createdAt: string;
}

/** GET /v1/admin/stats: per-tenant figures, and the pools that handler workers serve. */
export interface Stats {
  tenants: Array<{
    tenantId: string;
    maxInFlight: number;
    status: TenantStatus;
    running: number;
    due: number;
    pending: number;
    jobs: number;
    dead: number;
    oldestDueLagMs: number | null;
  }>;
  /** Per pool: its config's pause flag and live load. */
  pools: Array<{ type: string; paused: boolean; concurrency: number; running: number; due: number; pending: number }>;
  /** `served: false`: no worker has stamped the pool lately, and its `due` triggers wait for one. */
  handlerPools: Array<{ type: string; served: boolean; lastSeenAt: string; due: number }>;
}

export type NotificationEvent = "trigger.dead" | "job.paused" | "job.recovered" | "tenant.quota_exhausted";

interface ChannelOptions {
  /** Only these events; default all of them. */
  events?: NotificationEvent[];
  /** At most one notification per job and event type in this window (seconds, default 900). */
  windowSeconds?: number;
}

export type CreateChannelInput =
  | ({ type: "webhook"; url: string } & ChannelOptions)
  | ({ type: "slack"; url: string } & ChannelOptions)
  | ({ type: "email"; to: string } & ChannelOptions);

export interface NotificationChannel {
  id: string;
  type: "webhook" | "slack" | "email";
  /** webhook: the URL; slack: only its origin (the URL is a credential). */
  url?: string;
  /** email: the address. */
  to?: string;
  events: NotificationEvent[] | null;
  windowSeconds: number;
  createdAt: string;
}

export interface Notification {
  id: string;
  channelId: string;
  channelType: "webhook" | "slack" | "email";
  event: NotificationEvent | "notification.test";
  jobId: string | null;
  /** Events of the same job and type folded into this one since the previous notification. */
  folded: number;
  data: Record<string, unknown>;
  status: "pending" | "sent" | "failed" | "cancelled";
  attempts: number;
  createdAt: string;
  finishedAt: string | null;
}

/** A fairness key's policy: the tenant's defaults, or what is in force for one key. */
export interface KeyPolicy {
  /** Runs of the key at once, 1-100000; null: no cap (the tenant's own cap still bounds the sum). */
  maxInFlight: number | null;
  /** Starts per second, 0.01-100000; null: no rate limit. */
  ratePerSecond: number | null;
  /** Its share of the tenant's worker time against the tenant's other backlogged keys, 0.01-1000. */
  weight: number;
}

/** PUT /v1/keys/{key}: a field left out takes the tenant's default; null sets no cap or no rate. */
export interface KeyOverride {
  maxInFlight?: number | null;
  ratePerSecond?: number | null;
  weight?: number;
}

/** PATCH /v1/key-defaults (JSON Merge Patch): null returns a field to its default (no cap, no rate, weight 1). */
export type KeyDefaultsPatch = { [K in keyof KeyPolicy]?: KeyPolicy[K] | null };

export interface KeyInfo {
  key: string;
  /** This key's own override; null: the defaults apply. */
  override: KeyOverride | null;
  /** The policy in force: the override over the defaults. */
  policy: KeyPolicy;
  running: number;
  due: number;
  oldestDueLagMs: number | null;
  /** Of the tenant's recent worker time, the part this key's runs took (0 to 1). */
  workerTimeShare: number;
}

export interface BackfillInput {
  /** The range's start, inclusive. */
  from: string | Date;
  /** The range's end, exclusive; not in the future. */
  to: string | Date;
  /** skip (default): leave out fires the job already has a trigger for that ran, runs or will run. */
  overlap?: "skip" | "allow";
}

/** A backfill of a cron job: its fires in [from, to) as triggers behind the tenant's live work. */
export interface Backfill {
  id: string;
  jobId: string;
  from: string;
  to: string;
  overlap: "skip" | "allow";
  fires: number;
  skipped: number;
  /** Its triggers by status. */
  counts: Record<string, number>;
  cancelledAt: string | null;
  createdAt: string;
  /** On cancel: how many triggers that request cancelled. */
  cancelled?: number;
}
