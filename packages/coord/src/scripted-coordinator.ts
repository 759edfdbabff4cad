// The ONE implementation of the Coordinator on Redis, shared by the redis:// (ioredis) and the
// Upstash REST drivers. It depends only on `RedisLike` (three methods), so the drivers differ in a
// tiny adapter and the tests of one exercise the logic of both.
import type { Coordinator, CoordinatorKind, ReadyEntry } from "./coordinator.ts";
import { checkLimitArgs } from "./coordinator.ts";
import { runScript, type ScriptRunner } from "./hash.ts";
import { keysFor } from "./keys.ts";
import { LIMIT_SCRIPT } from "./lua/limit.ts";
import { MARK_READY_SCRIPT } from "./lua/mark-ready.ts";
import { READY_TENANTS_SCRIPT } from "./lua/ready-tenants.ts";
import { HAS_INDEX_SCRIPT, REBUILD_CHUNK_SCRIPT, REBUILD_SWAP_SCRIPT } from "./lua/rebuild.ts";
import { RESCHEDULE_SCRIPT } from "./lua/reschedule.ts";

/** Everything the shared logic needs from a Redis client (cf. ratelimit-js `Pick<Redis, "evalsha" | …>`). */
export interface RedisLike extends ScriptRunner {
  publish(channel: string, message: string): Promise<unknown>;
}

export interface ScriptedCoordinatorOptions {
  kind: Exclude<CoordinatorKind, "memory">;
  redis: RedisLike;
  prefix: string;
  /** Push subscription for wake hints; absent for drivers without push (onWake is then a no-op). */
  subscribe?: (channel: string, onMessage: () => void) => () => void;
  close: () => Promise<void>;
}

/** Entries per ZADD during a rebuild: ~1000 args per command stays far below Lua's unpack limit (~8000). */
const REBUILD_CHUNK = 500;
/** A half-built temp index outlives a crashed rebuilder by at most this long. */
const REBUILD_TTL_MS = 60_000;

export function createScriptedCoordinator(opts: ScriptedCoordinatorOptions): Coordinator {
  const { redis } = opts;
  const keys = keysFor(opts.prefix);
  const wakeListeners = new Set<() => void>();
  let unsubscribe: (() => void) | undefined;

  return {
    kind: opts.kind,

    async limit(key, limit, windowMs, nowMs = Date.now()) {
      checkLimitArgs(limit, windowMs);
      const reply = (await runScript(
        redis,
        LIMIT_SCRIPT,
        [keys.limiter(key)],
        [String(limit), String(windowMs), String(nowMs)],
      )) as [number, number, number];
      return { allowed: Number(reply[0]) === 1, remaining: Number(reply[1]), retryAfterMs: Number(reply[2]) };
    },

    async markReady(type, tenantId, dueAtMs) {
      await runScript(redis, MARK_READY_SCRIPT, [keys.ready(type)], [tenantId, String(dueAtMs)]);
    },

    async readyTenants(type, nowMs, limit) {
      if (limit <= 0) return [];
      const flat = (await runScript(
        redis,
        READY_TENANTS_SCRIPT,
        [keys.ready(type)],
        [String(nowMs), String(Math.floor(limit))],
      )) as string[];
      const out: ReadyEntry[] = [];
      for (let i = 0; i < flat.length; i += 2) out.push({ tenantId: String(flat[i]), dueAtMs: Number(flat[i + 1]) });
      return out;
    },

    async reschedule(type, tenantId, expectedDueAtMs, nextDueAtMs) {
      const reply = await runScript(
        redis,
        RESCHEDULE_SCRIPT,
        [keys.ready(type)],
        [tenantId, String(expectedDueAtMs), nextDueAtMs === null ? "" : String(nextDueAtMs)],
      );
      return Number(reply) === 1;
    },

    async rebuildReady(type, entries) {
      const temp = keys.readyRebuild(type, crypto.randomUUID());
      for (let i = 0; i < entries.length; i += REBUILD_CHUNK) {
        const args = [String(REBUILD_TTL_MS)];
        for (const e of entries.slice(i, i + REBUILD_CHUNK)) args.push(String(e.dueAtMs), e.tenantId);
        await runScript(redis, REBUILD_CHUNK_SCRIPT, [temp], args);
      }
      await runScript(redis, REBUILD_SWAP_SCRIPT, [keys.ready(type), temp, keys.readyBuilt(type)], []);
    },

    async hasReadyIndex(type) {
      return Number(await runScript(redis, HAS_INDEX_SCRIPT, [keys.readyBuilt(type)], [])) === 1;
    },

    async wake() {
      await redis.publish(keys.wake, "1");
    },

    onWake(listener) {
      if (!opts.subscribe) return () => {}; // no push (Upstash REST): executors rely on their ≤1 s poll
      wakeListeners.add(listener);
      // One subscription per coordinator, opened with the first listener and closed with the last.
      unsubscribe ??= opts.subscribe(keys.wake, () => {
        for (const l of [...wakeListeners]) {
          try {
            l();
          } catch {
            // A wake is a hint; one listener's bug must not stop the others or the subscriber connection.
          }
        }
      });
      return () => {
        wakeListeners.delete(listener);
        if (wakeListeners.size === 0 && unsubscribe) {
          unsubscribe();
          unsubscribe = undefined;
        }
      };
    },

    async close() {
      wakeListeners.clear();
      unsubscribe?.();
      unsubscribe = undefined;
      await opts.close();
    },
  };
}
