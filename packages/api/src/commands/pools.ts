// Pool commands: a pool type's config (set whole, or a merge patch) and pausing or resuming it, for
// the admin API and the dashboard alike. A refusal is an ApiError and writes nothing.
import { DEFAULT_POOL, getPool, putPool, setPoolPaused } from "@fairway/store";
import type { z } from "zod";
import { ApiError, fromZod } from "../errors.ts";
import { applyMergePatch, parseMerged, type Patch } from "../merge-patch.ts";
import { poolType, putPoolBody } from "../schemas.ts";
import type { CommandContext } from "./jobs.ts";

/** A pool type from a path or a form, checked before anything is read or written. */
export function poolTypeParam(raw: string): string {
  const type = poolType.safeParse(raw);
  if (!type.success) throw fromZod(type.error);
  return type.data;
}

async function savePool({ deps, log }: CommandContext, type: string, body: z.infer<typeof putPoolBody>) {
  const leaseMs = body.leaseMs ?? Math.max(DEFAULT_POOL.leaseMs, body.timeoutMs + 30_000);
  if (leaseMs < body.timeoutMs + 1000) {
    throw new ApiError(
      400,
      "validation_error",
      "leaseMs must exceed timeoutMs by at least 1000 ms (a run must end before its lease)",
    );
  }
  const cfg = await putPool(deps.db, { ...DEFAULT_POOL, ...body, leaseMs, type });
  log.info("pool config saved", { type });
  return cfg;
}

/** Sets a pool's whole config from an API-shaped body; leaseMs defaults from timeoutMs. */
export async function putPoolConfig(ctx: CommandContext, rawType: string, raw: unknown) {
  const type = poolTypeParam(rawType);
  const body = putPoolBody.safeParse(raw);
  if (!body.success) throw fromZod(body.error);
  return savePool(ctx, type, body.data);
}

/** A merge patch of the pool's config (defaults when it has none yet). null resets a field to its
 *  default (leaseMs: derived from timeoutMs); the merged config is checked like a PUT. */
export async function patchPoolConfig(ctx: CommandContext, rawType: string, patch: Patch) {
  const type = poolTypeParam(rawType);
  const { type: _t, paused: _p, ...current } = await getPool(ctx.deps.db, type);
  const body = parseMerged(putPoolBody, applyMergePatch(current, patch));
  if ("timeoutMs" in patch && !("leaseMs" in patch) && (body.leaseMs ?? 0) < body.timeoutMs + 1000) delete body.leaseMs;
  return savePool(ctx, type, body);
}

/** Claims of this type stop (paused) or start again; a resume wakes the executors so the pool's due
 *  work starts now (they reload pools within seconds anyway). Idempotent. */
export async function setPoolPausedCommand({ deps, log }: CommandContext, rawType: string, paused: boolean) {
  const type = poolTypeParam(rawType);
  const cfg = await setPoolPaused(deps.db, type, paused);
  log.info(paused ? "pool paused" : "pool resumed", { type });
  if (!paused)
    await deps.coordinator
      .wake()
      .catch((err) => log.warn("wake failed; executors reload pools within seconds", { err }));
  return cfg;
}
