// Trigger commands: replaying a dead letter, or all of one job's, for the API and the dashboard alike.
import {
  getJob,
  getTrigger,
  replayJobDeadLetters as replayJobRows,
  replayTrigger as replayTriggerRow,
} from "@fairway/store";
import { announceWork } from "../announce.ts";
import { ApiError, notFound } from "../errors.ts";
import type { CommandContext } from "./jobs.ts";

/** A dead trigger pending again (same webhook-id); 409 not_dead for any other status. */
export async function replayTrigger({ deps, log }: CommandContext, tenantId: string, id: string) {
  const replayed = await replayTriggerRow(deps.db, tenantId, id);
  if (!replayed) {
    const exists = await getTrigger(deps.db, tenantId, id);
    if (!exists) throw notFound("trigger");
    throw new ApiError(409, "not_dead", `only dead triggers can be replayed; this one is ${exists.status}`);
  }
  const t = (await getTrigger(deps.db, tenantId, replayed.id))!;
  announceWork(deps.coordinator, log, { type: t.type, tenantId, dueAt: null }, deps.now());
  return t;
}

/** The oldest dead letters of one job (at most REPLAY_BATCH a call) pending again, and how many the
 *  job still has; 404 for a job the tenant does not have. A job with none replays 0: not an error, so
 *  a caller can repeat the call until `remaining` is 0. */
export async function replayJobDeadLetters({ deps, log }: CommandContext, tenantId: string, jobId: string) {
  const job = await getJob(deps.db, tenantId, jobId);
  if (!job) throw notFound("job");
  const r = await replayJobRows(deps.db, tenantId, jobId);
  if (r.ids.length > 0) announceWork(deps.coordinator, log, { type: job.type, tenantId, dueAt: null }, deps.now());
  log.info("dead letters replayed", { jobId, replayed: r.ids.length, remaining: r.remaining });
  return { jobId, replayed: r.ids.length, triggerIds: r.ids, remaining: r.remaining };
}
