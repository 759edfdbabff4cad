// The command layer as the dashboard calls it (its DashboardDeps.commands, handed in by the apps that
// mount it): the same functions the routes call, with the dashboard's logger; the tenant comes from the
// dashboard's session, not a key.
import { getTenant } from "@fairway/store";
import type { ResolvedDeps } from "../env.ts";
import { notFound } from "../errors.ts";
import { startBackfill, stopBackfill } from "./backfills.ts";
import { addChannel, deleteChannel, testChannel } from "./channels.ts";
import { deleteKeyPolicy, patchKeyDefaults, putKeyPolicy } from "./keys.ts";
import { cancelJob, createJob, pauseJob, resumeJob, runJob, updateJob, type CommandContext } from "./jobs.ts";
import { parseMerged } from "../merge-patch.ts";
import { backfillBody, createJobBody } from "../schemas.ts";
import { setPoolPausedCommand } from "./pools.ts";
import { createPlan, deletePlan, updatePlan } from "./plans.ts";
import { revokePortalSessions, updateTenant } from "./tenants.ts";
import { cancelTrigger, rerunTrigger } from "./trigger-verbs.ts";
import { replayJobDeadLetters, replayTrigger } from "./triggers.ts";

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
  /** POST /v1/triggers/{id}/cancel and /rerun (an override of the payload or body for that run). */
  cancelTrigger(tenantId: string, id: string): Promise<{ id: string }>;
  rerunTrigger(tenantId: string, id: string, override: { payload?: unknown; body?: unknown }): Promise<{ id: string }>;
  /** POST /v1/dead-letters/replay: the job's oldest dead letters (a bounded batch) pending again. */
  replayJobDeadLetters(tenantId: string, jobId: string): Promise<{ replayed: number; remaining: number }>;
  addChannel(tenantId: string, body: unknown): Promise<{ id: string }>;
  deleteChannel(tenantId: string, id: string): Promise<void>;
  testChannel(tenantId: string, id: string): Promise<unknown>;
  updateTenant(tenantId: string, patch: Record<string, unknown>): Promise<{ id: string }>;
  /** POST /v1/admin/plans, PATCH and DELETE /v1/admin/plans/{id}, from API-shaped bodies. */
  createPlan(body: unknown): Promise<{ id: string }>;
  updatePlan(id: string, patch: Record<string, unknown>): Promise<{ plan: { id: string }; tenants: number }>;
  deletePlan(id: string): Promise<{ id: string }>;
  setPoolPaused(type: string, paused: boolean): Promise<{ type: string }>;
  /** Ends every portal link and session of the tenant. */
  revokePortalSessions(tenantId: string): Promise<{ tenantId: string }>;
  /** A fairness key's override (PUT /v1/keys/{key}) and the tenant's key defaults (a merge patch). */
  putKeyPolicy(tenantId: string, key: string, body: unknown): Promise<unknown>;
  deleteKeyPolicy(tenantId: string, key: string): Promise<unknown>;
  patchKeyDefaults(tenantId: string, patch: Record<string, unknown>): Promise<unknown>;
  /** DELETE /v1/backfills/{id}: its triggers not yet claimed are cancelled. */
  cancelBackfill(tenantId: string, id: string): Promise<{ id: string; cancelledNow: number }>;
  /** POST /v1/jobs/{id}/backfill from an API-shaped body ({ from, to, overlap? }), checked as the API does. */
  startBackfill(
    tenantId: string,
    jobId: string,
    body: unknown,
  ): Promise<{ id: string; fires: number; skipped: number }>;
}

export function dashboardCommands(deps: ResolvedDeps): DashboardCommands {
  const ctx: CommandContext = { deps, log: deps.log.child({ via: "dashboard" }) };
  return {
    runJob: (tenantId, id) => runJob(ctx, tenantId, id),
    pauseJob: (tenantId, id) => pauseJob(ctx, tenantId, id),
    resumeJob: (tenantId, id) => resumeJob(ctx, tenantId, id),
    updateJob: async (tenantId, id, patch) => {
      const tenant = await getTenant(deps.db, tenantId);
      if (!tenant) throw notFound("tenant");
      return updateJob(ctx, tenant, id, patch);
    },
    createJob: async (tenantId, body) => {
      const tenant = await getTenant(deps.db, tenantId);
      if (!tenant) throw notFound("tenant");
      return (await createJob(ctx, tenant, parseMerged(createJobBody, body))).job;
    },
    cancelJob: (tenantId, id) => cancelJob(ctx, tenantId, id),
    replayTrigger: (tenantId, id) => replayTrigger(ctx, tenantId, id),
    cancelTrigger: (tenantId, id) => cancelTrigger(ctx, tenantId, id),
    rerunTrigger: async (tenantId, id, override) => {
      const tenant = await getTenant(deps.db, tenantId);
      if (!tenant) throw notFound("tenant");
      return rerunTrigger(ctx, tenant, id, override);
    },
    replayJobDeadLetters: (tenantId, jobId) => replayJobDeadLetters(ctx, tenantId, jobId),
    addChannel: (tenantId, body) => addChannel(ctx, tenantId, body),
    deleteChannel: (tenantId, id) => deleteChannel(ctx, tenantId, id),
    testChannel: (tenantId, id) => testChannel(ctx, tenantId, id),
    updateTenant: (tenantId, patch) => updateTenant(ctx, tenantId, patch),
    createPlan: (body) => createPlan(ctx, body),
    updatePlan: (id, patch) => updatePlan(ctx, id, patch),
    deletePlan: (id) => deletePlan(ctx, id),
    setPoolPaused: (type, paused) => setPoolPausedCommand(ctx, type, paused),
    revokePortalSessions: (tenantId) => revokePortalSessions(ctx, tenantId),
    putKeyPolicy: (tenantId, key, body) => putKeyPolicy(deps.db, tenantId, key, body),
    deleteKeyPolicy: (tenantId, key) => deleteKeyPolicy(deps.db, tenantId, key),
    patchKeyDefaults: (tenantId, patch) => patchKeyDefaults(deps.db, tenantId, patch),
    cancelBackfill: (tenantId, id) => stopBackfill(ctx, tenantId, id),
    startBackfill: (tenantId, jobId, body) => startBackfill(ctx, tenantId, jobId, parseMerged(backfillBody, body)),
  };
}
