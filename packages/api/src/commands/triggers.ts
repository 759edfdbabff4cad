// Trigger commands: replaying a dead letter, for the API and the dashboard alike.
import { getTrigger, replayTrigger as replayTriggerRow } from "@fairway/store";
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
