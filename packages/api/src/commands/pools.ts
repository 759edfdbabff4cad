// Pool commands: pausing and resuming a pool type, for the admin API and the dashboard alike.
import { setPoolPaused } from "@fairway/store";
import { fromZod } from "../errors.ts";
import { poolType } from "../schemas.ts";
import type { CommandContext } from "./jobs.ts";

/** Claims of this type stop (paused) or start again; a resume wakes the executors so the pool's due
 *  work starts now (they reload pools within seconds anyway). Idempotent. */
export async function setPoolPausedCommand({ deps, log }: CommandContext, rawType: string, paused: boolean) {
  const parsed = poolType.safeParse(rawType);
  if (!parsed.success) throw fromZod(parsed.error);
  const cfg = await setPoolPaused(deps.db, parsed.data, paused);
  log.info(paused ? "pool paused" : "pool resumed", { type: parsed.data });
  if (!paused)
    await deps.coordinator
      .wake()
      .catch((err) => log.warn("wake failed; executors reload pools within seconds", { err }));
  return cfg;
}
