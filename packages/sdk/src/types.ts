// The API's shapes, as the SDK's users see them. Dates are ISO-8601 strings on the wire.
import type { MisfirePolicy, OverlapPolicy, TriggerStatus, JobStatus, TenantStatus, AttemptOutcome } from "@fairway/core";

export type ScheduleInput = { cron: string; timezone?: string } | { at: string | Date } | { delayMs: number };

export interface CreateJobInput<P = unknown> {
  name: string;
  /** The pool. Default "webhook". */
  type?: string;
  schedule: ScheduleInput;
  target?: { url: string; method?: "POST" | "PUT" | "PATCH" | "GET" | "DELETE"; headers?: Record<string, string> };
  payload?: P;
  retry?: { maxAttempts?: number; initialDelayMs?: number; maxDelayMs?: number };
  timeoutMs?: number;
  priority?: number;
  overlap?: OverlapPolicy;
  misfire?: MisfirePolicy;
  catchupWindowMs?: number;
}

/** A JSON Merge Patch (RFC 7396) of a job: absent fields keep their value, nested objects merge (so
 *  `{ schedule: { cron } }` keeps the time zone, `{ target: { method } }` keeps the URL), and null
 *  clears a field that may be cleared (payload, timeoutMs, retry, a header). */
export type MergePatch<T> = { [K in keyof T]?: (T[K] extends object ? MergePatch<T[K]> | T[K] : T[K]) | null };
export type UpdateJobInput<P = unknown> = MergePatch<Omit<CreateJobInput<P>, "type" | "schedule">> & {
  schedule?: { cron?: string; timezone?: string | null } | { at: string | Date } | { delayMs: number };
};

export interface ListJobsOptions {
  limit?: number;
  cursor?: string;
  /** One status; without it every status but cancelled. */
  status?: JobStatus;
  type?: string;
  name?: string;
}

export interface Job<P = unknown> {
  id: string;
  name: string;
  type: string;
  status: JobStatus;
  schedule: { cron: string; timezone: string } | { at: string };
  target: { url: string; method: string; headers?: Record<string, string> } | null;
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
  /** On create: true when a one-time job's instant had already passed, so it fires at once. */
  firesImmediately?: boolean;
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

/** A dead letter: the trigger, its job's name and type, and how its last attempt ended. */
export interface DeadLetter extends Trigger {
  jobName: string;
  jobType: string;
  lastAttempt: { outcome: AttemptOutcome; httpStatus: number | null; error: string | null } | null;
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
