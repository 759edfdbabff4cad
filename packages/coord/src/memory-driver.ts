// In-process coordination: the embedded single-process default. Same semantics as the Redis
// drivers (the shared test suite runs against all three), no I/O, nothing survives a restart —
// which is exactly a flushed Redis, so hasReadyIndex starts false and the caller rebuilds.
import type { Coordinator, ReadyEntry } from "./coordinator.ts";
import { checkLimitArgs } from "./coordinator.ts";
import { TOUCH_NUDGE_MS } from "./lua/mark-ready.ts";
import { takeToken, type BucketState } from "./token-bucket.ts";

export function createMemoryCoordinator(): Coordinator {
  const buckets = new Map<string, BucketState & { expiresAt: number }>();
  const ready = new Map<string, Map<string, number>>(); // type → tenant → score
  const built = new Set<string>();
  const wakeListeners = new Set<() => void>();

  const index = (type: string) => {
    let m = ready.get(type);
    if (!m) ready.set(type, (m = new Map()));
    return m;
  };

  return {
    kind: "memory",

    async limit(key, limit, windowMs, nowMs = Date.now()) {
      checkLimitArgs(limit, windowMs);
      const prev = buckets.get(key);
      // Like the Redis key's PEXPIRE: an idle bucket is forgotten (and is full) after one window.
      const live = prev && prev.expiresAt > nowMs ? prev : undefined;
      const { state, result } = takeToken(live, limit, windowMs, nowMs);
      buckets.set(key, { ...state, expiresAt: nowMs + Math.ceil(windowMs) });
      if (buckets.size > 10_000) for (const [k, b] of buckets) if (b.expiresAt <= nowMs) buckets.delete(k);
      return result;
    },

    async markReady(type, tenantId, dueAtMs) {
      // Same rule as lua/mark-ready.ts: earliest wins, and an existing member always moves (slightly
      // earlier) so an in-flight reschedule CAS fails rather than hiding new work.
      const m = index(type);
      const current = m.get(tenantId);
      m.set(tenantId, current === undefined ? dueAtMs : Math.min(current - TOUCH_NUDGE_MS, dueAtMs));
    },

    async readyTenants(type, nowMs, limit) {
      if (limit <= 0) return [];
      const due: ReadyEntry[] = [];
      for (const [tenantId, dueAtMs] of index(type)) if (dueAtMs <= nowMs) due.push({ tenantId, dueAtMs });
      // Redis orders equal scores by member, bytewise; code-unit order matches it for ASCII ids.
      due.sort((a, b) => a.dueAtMs - b.dueAtMs || (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : 0));
      return due.slice(0, Math.floor(limit));
    },

    async reschedule(type, tenantId, expectedDueAtMs, nextDueAtMs) {
      const m = index(type);
      if (m.get(tenantId) !== expectedDueAtMs) return false;
      if (nextDueAtMs === null) m.delete(tenantId);
      else m.set(tenantId, nextDueAtMs);
      return true;
    },

    async rebuildReady(type, entries) {
      // Merge with MIN, as lua/rebuild.ts does (see Coordinator.rebuildReady for why not replace).
      const m = index(type);
      for (const e of entries) {
        const current = m.get(e.tenantId);
        if (current === undefined || e.dueAtMs < current) m.set(e.tenantId, e.dueAtMs);
      }
      built.add(type);
    },

    async hasReadyIndex(type) {
      return built.has(type);
    },

    async wake() {
      // Delivered asynchronously, like a pub/sub message: a listener never runs inside wake()'s caller.
      for (const l of [...wakeListeners]) {
        queueMicrotask(() => {
          try {
            l();
          } catch {
            // A wake is a hint; a throwing listener must not become an uncaught exception.
          }
        });
      }
    },

    onWake(listener) {
      wakeListeners.add(listener);
      return () => {
        wakeListeners.delete(listener);
      };
    },

    async close() {
      wakeListeners.clear();
    },
  };
}
