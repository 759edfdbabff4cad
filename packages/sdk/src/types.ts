// The API's shapes, as the SDK's users see them. Dates are ISO-8601 strings on the wire. They are
// checked against the API's own zod schemas by test/packages/sdk-types.ts, so the two cannot drift.

export type JobStatus = "active" | "paused" | "completed" | "cancelled";
export type TriggerStatus = "pending" | "running" | "succeeded" | "dead" | "skipped" | "cancelled";
export type OverlapPolicy = "allow" | "skip" | "buffer_one";
export type MisfirePolicy = "fire_once" | "skip" | "fire_all";
export type TenantStatus = "active" | "suspended";
export type AttemptOutcome = "success" | "http_error" | "network_error" | "timeout" | "handler_error" | "lease_expired";

export type HttpMethod = "POST" | "PUT" | "PATCH" | "GET" | "DELETE";

export type ScheduleInput = { cron: string; timezone?: string } | { at: string | Date } | { delayMs: number };

export interface CreateJobInput<P = unknown> {
  name: string;
  /** The pool. Default "webhook". A type served by a worker (createWorker) needs no target. */
  type?: string;
  schedule: ScheduleInput;
  target?: { url: string; method?: HttpMethod; headers?: Record<string, string> };
  payload?: P;
  retry?: { maxAttempts?: number; initialDelayMs?: number; maxDelayMs?: number };
  timeoutMs?: number;
  priority?: number;
  overlap?: OverlapPolicy;
  misfire?: MisfirePolicy;
  catchupWindowMs?: number;
}

export type UpdateJobInput<P = unknown> = Partial<Omit<CreateJobInput<P>, "type">>;

export interface Job<P = unknown> {
  id: string;
  name: string;
  type: string;
  status: JobStatus;
  schedule: { cron: string; timezone: string } | { at: string };
  target: { url: string; method: HttpMethod; headers?: Record<string, string> } | null;
  payload: P | null;
  retry: { maxAttempts: number; initialDelayMs: number; maxDelayMs: number };
  timeoutMs: number | null;
  priority: number;
  overlap: OverlapPolicy;
  misfire: MisfirePolicy;
  catchupWindowMs: number;
  nextFireAt: string | null;
  /** On GET /v1/jobs/:id for cron jobs: the next 5 fire instants. */
  nextFires?: string[];
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
}

export interface Trigger {
  id: string;
  jobId: string;
  kind: "scheduled" | "manual";
  scheduledFor: string;
  status: TriggerStatus;
  reason: string | null;
  attemptCount: number;
  maxAttempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
  finishedAt: string | null;
  attempts?: Attempt[];
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface Quota {
  limits: { maxInFlight: number; weight: number; ratePerSecond: number | null; burst: number | null; maxJobs: number; maxPayloadBytes: number };
  usage: { running: number; due: number; pending: number; jobs: number; dead: number; oldestDueLagMs: number | null };
}

export interface TenantQuotas {
  maxInFlight?: number;
  weight?: number;
  ratePerSecond?: number | null;
  burst?: number | null;
  maxJobs?: number;
  maxPayloadBytes?: number;
}

export interface Tenant extends Required<TenantQuotas> {
  id: string;
  name: string;
  status: TenantStatus;
  createdAt: string;
  updatedAt: string;
}

export interface PoolConfig {
  type: string;
  concurrency: number;
  timeoutMs: number;
  leaseMs: number;
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
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
  /** `served: false`: no worker has stamped the pool lately, and its `due` triggers wait for one. */
  handlerPools: Array<{ type: string; served: boolean; lastSeenAt: string; due: number }>;
}
