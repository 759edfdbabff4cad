// The command layer as the dashboard calls it (DashboardDeps.commands): the same functions the routes
// call, with the dashboard's logger; the tenant comes from the dashboard's session, not a key.
import type { DashboardCommands } from "@fairway/dashboard";
import { getTenant } from "@fairway/store";
import type { ResolvedDeps } from "../env.ts";
import { notFound } from "../errors.ts";
import { stopBackfill } from "./backfills.ts";
import { addChannel, deleteChannel, testChannel } from "./channels.ts";
import { deleteKeyPolicy, patchKeyDefaults, putKeyPolicy } from "./keys.ts";
import { cancelJob, createJob, pauseJob, resumeJob, runJob, updateJob, type CommandContext } from "./jobs.ts";
import { parseMerged } from "../merge-patch.ts";
import { createJobBody } from "../schemas.ts";
import { setPoolPausedCommand } from "./pools.ts";
import { updateTenant } from "./tenants.ts";
import { replayJobDeadLetters, replayTrigger } from "./triggers.ts";

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
    replayJobDeadLetters: (tenantId, jobId) => replayJobDeadLetters(ctx, tenantId, jobId),
    addChannel: (tenantId, body) => addChannel(ctx, tenantId, body),
    deleteChannel: (tenantId, id) => deleteChannel(ctx, tenantId, id),
    testChannel: (tenantId, id) => testChannel(ctx, tenantId, id),
    updateTenant: (tenantId, patch) => updateTenant(ctx, tenantId, patch),
    setPoolPaused: (type, paused) => setPoolPausedCommand(ctx, type, paused),
    putKeyPolicy: (tenantId, key, body) => putKeyPolicy(deps.db, tenantId, key, body),
    deleteKeyPolicy: (tenantId, key) => deleteKeyPolicy(deps.db, tenantId, key),
    patchKeyDefaults: (tenantId, patch) => patchKeyDefaults(deps.db, tenantId, patch),
    cancelBackfill: (tenantId, id) => stopBackfill(ctx, tenantId, id),
  };
}
