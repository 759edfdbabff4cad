// The API's shapes (DESIGN.md §7), as the SDK's users see them. Dates are ISO-8601 strings on the wire.
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
  /** Default at_least_once. at_most_once: never sent twice; a delivery that may have arrived ends `unknown`. */
  delivery?: "at_least_once" | "at_most_once";
  catchupWindowMs?: number;
}

export type UpdateJobInput<P = unknown> = Partial<Omit<CreateJobInput<P>, "type">>;

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
  delivery: "at_least_once" | "at_most_once";
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
  /** Days finished triggers and one-time jobs are kept (default 30), and dead ones (default 90). */
  historyRetentionDays?: number;
  deadRetentionDays?: number;
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
  /** Paused: nothing of this type is claimed (POST /v1/admin/pools/:type/pause | resume). */
  paused: boolean;
}
