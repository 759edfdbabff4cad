// What the dashboard needs from the app that mounts it (packages/api's createApp hands its own deps in).
import type { Coordinator } from "@fairway/coord";
import type { FailedAuthLimiter, Logger } from "@fairway/core";
import type { Context } from "hono";
import type { PortalBrand } from "./portal-brand.ts";
import type { PortalClaims } from "./portal-link.ts";
import type { Db } from "@fairway/store";

export interface DashboardDeps {
  db: Db;
  /** Saved and run-now jobs are announced to executors. */
  coordinator: Pick<Coordinator, "limit" | "wake" | "markReady">;
  /** Signs sessions and portal links (a key derived from it per purpose; see signed-token.ts). */
  adminToken: string;
  /** Origins that may embed a portal view in an iframe (FAIRWAY_PORTAL_ORIGINS); none by default. */
  portalOrigins: readonly string[];
  /** The portal's name and accent (FAIRWAY_PORTAL_TITLE, FAIRWAY_PORTAL_ACCENT); Fairway's own by default. */
  portalBrand?: PortalBrand;
  now: () => number;
  log: Logger;
  /** Every change the dashboard makes, through the API's command layer (packages/api/src/commands):
   *  the same checks and messages as the API; a refusal throws an error with the API's status, code and
   *  message (see refusalOf). The dashboard writes nothing to the store itself. */
  commands: DashboardCommands;
  /** Failed sign-ins and portal tokens, per client address (shared with the API's routes). */
  failedAuth: FailedAuthLimiter;
  /** The client's address, or null when it cannot be told (then nothing is limited). */
  clientAddress: (c: Context) => string | null;
}

/** The commands the dashboard calls; bodies and patches are API-shaped (JSON Merge Patch for jobs). */
export interface DashboardCommands {
  runJob(tenantId: string, id: string): Promise<{ id: string }>;
  pauseJob(tenantId: string, id: string): Promise<{ id: string }>;
  resumeJob(tenantId: string, id: string): Promise<{ id: string }>;
  updateJob(tenantId: string, id: string, patch: Record<string, unknown>): Promise<{ id: string }>;
  /** A new job from an API-shaped body (POST /v1/jobs), checked exactly as the API checks it. */
  createJob(tenantId: string, body: unknown): Promise<{ id: string }>;
  cancelJob(tenantId: string, id: string): Promise<{ id: string }>;
  replayTrigger(tenantId: string, id: string): Promise<{ id: string }>;
  /** POST /v1/dead-letters/replay: the job's oldest dead letters (a bounded batch) pending again. */
  replayJobDeadLetters(tenantId: string, jobId: string): Promise<{ replayed: number; remaining: number }>;
  addChannel(tenantId: string, body: unknown): Promise<{ id: string }>;
  deleteChannel(tenantId: string, id: string): Promise<void>;
  testChannel(tenantId: string, id: string): Promise<unknown>;
  updateTenant(tenantId: string, patch: Record<string, unknown>): Promise<{ id: string }>;
  setPoolPaused(type: string, paused: boolean): Promise<{ type: string }>;
  /** A fairness key's override (PUT /v1/keys/{key}) and the tenant's key defaults (a merge patch). */
  putKeyPolicy(tenantId: string, key: string, body: unknown): Promise<unknown>;
  deleteKeyPolicy(tenantId: string, key: string): Promise<unknown>;
  patchKeyDefaults(tenantId: string, patch: Record<string, unknown>): Promise<unknown>;
  /** DELETE /v1/backfills/{id}: its triggers not yet claimed are cancelled. */
  cancelBackfill(tenantId: string, id: string): Promise<{ id: string; cancelledNow: number }>;
}

/** Who is looking: the operator (every tenant), or one tenant through a portal session. */
export type Scope =
  | { kind: "admin"; csrf: string }
  | { kind: "tenant"; tenantId: string; csrf: string; portal: boolean; base: string };

export type DashEnv = {
  Variables: {
    dash: DashboardDeps;
    scope: Scope;
    tenantId: string;
    base: string;
    portal: boolean;
    csrf: string;
    portalClaims: PortalClaims;
  };
};
