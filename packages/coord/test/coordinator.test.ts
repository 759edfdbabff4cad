// One behaviour suite, three drivers: in-process, redis:// (ioredis) and Upstash REST (@upstash/redis
// through test/support/upstash-shim.ts), all on the real Redis at 127.0.0.1:6379 under this file's
// own key prefix.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createMemoryCoordinator,
  createRedisCoordinator,
  createUpstashCoordinator,
  type Coordinator,
} from "../src/index.ts";
import { deletePrefix, REDIS_URL, testPrefix } from "../../../test/support/redis.ts";
import { startUpstashShim, type UpstashShim } from "../../../test/support/upstash-shim.ts";

interface Driver {
  name: "memory" | "redis" | "upstash";
  hasPush: boolean;
  start(): Promise<Coordinator>;
  /** Lose all coordination state (FLUSH / fresh Redis; for memory: a process restart). */
  flush(c: Coordinator): Promise<Coordinator>;
  stop(): Promise<void>;
}

const redisPrefix = testPrefix("coord-redis");
const upstashPrefix = testPrefix("coord-upstash");
let shim: UpstashShim | undefined;

const drivers: Driver[] = [
  {
    name: "memory",
    hasPush: true,
    start: async () => createMemoryCoordinator(),
    flush: async (c) => {
      await c.close();
      return createMemoryCoordinator();
    },
    stop: async () => {},
  },
  {
    name: "redis",
    hasPush: true,
    start: async () => createRedisCoordinator({ url: REDIS_URL, prefix: redisPrefix }),
    flush: async (c) => {
      await deletePrefix(redisPrefix);
      return c;
    },
    stop: async () => void (await deletePrefix(redisPrefix)),
  },
  {
    name: "upstash",
    hasPush: false,
    start: async () => {
      shim = await startUpstashShim({ redisUrl: REDIS_URL, token: "suite-token" });
      return createUpstashCoordinator({ url: shim.url, token: shim.token, prefix: upstashPrefix });
    },
    flush: async (c) => {
      await deletePrefix(upstashPrefix);
      return c;
    },
    stop: async () => {
      await shim?.close();
      await deletePrefix(upstashPrefix);
    },
  },
];

let n = 0;
/** A pool type / limiter key no other test uses, so tests share one coordinator without interfering. */
const fresh = (label: string) => `${label}-${++n}`;

describe.each(drivers)("$name coordinator", (driver) => {
  let coord: Coordinator;
  beforeAll(async () => {
    coord = await driver.start();
  });
  afterAll(async () => {
    await coord?.close();
    await driver.stop();
  });

  it("reports its kind", () => {
    expect(coord.kind).toBe(driver.name);
  });

  describe("limit (token bucket)", () => {
    const T = 1_700_000_000_000;

    it("allows `limit` requests, then refuses with the time until one token refills", async () => {
      const key = fresh("tenant");
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push(await coord.limit(key, 3, 60_000, T));
      expect(seen.slice(0, 3)).toEqual([
        { allowed: true, remaining: 2, retryAfterMs: 0 },
        { allowed: true, remaining: 1, retryAfterMs: 0 },
        { allowed: true, remaining: 0, retryAfterMs: 0 },
      ]);
      // 3 tokens per 60 s = one per 20 s.
      expect(seen[3]).toEqual({ allowed: false, remaining: 0, retryAfterMs: 20_000 });
      // Half way, the wait shrinks; once it has passed, exactly one more request fits.
      expect(await coord.limit(key, 3, 60_000, T + 10_000)).toEqual({
        allowed: false,
        remaining: 0,
        retryAfterMs: 10_000,
      });
      expect(await coord.limit(key, 3, 60_000, T + 20_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect((await coord.limit(key, 3, 60_000, T + 20_001)).allowed).toBe(false);
    });

    it("refills to capacity, never beyond", async () => {
      const key = fresh("tenant");
      for (let i = 0; i < 3; i++) await coord.limit(key, 3, 60_000, T);
      expect(await coord.limit(key, 3, 60_000, T + 10 * 60_000)).toEqual({
        allowed: true,
        remaining: 2,
        retryAfterMs: 0,
      });
    });

    it("keeps keys independent, and a clock that runs behind refills nothing", async () => {
      const a = fresh("tenant");
      const b = fresh("tenant");
      expect((await coord.limit(a, 1, 60_000, T)).allowed).toBe(true);
      expect((await coord.limit(a, 1, 60_000, T - 30_000)).allowed).toBe(false);
      expect((await coord.limit(b, 1, 60_000, T)).allowed).toBe(true);
    });

    it("rejects nonsense arguments as a caller bug", async () => {
      await expect(coord.limit(fresh("tenant"), 0, 1000)).rejects.toThrow(RangeError);
      await expect(coord.limit(fresh("tenant"), 5, 0)).rejects.toThrow(RangeError);
    });
  });

  describe("ready-tenant index", () => {
    it("markReady keeps the earliest due time", async () => {
      const type = fresh("pool");
      await coord.markReady(type, "t1", 2000);
      await coord.markReady(type, "t1", 1000);
      await coord.markReady(type, "t1", 3000); // later work: the earlier time stays (nudged < 1 ms earlier)
      const [entry, ...rest] = await coord.readyTenants(type, 10_000, 10);
      expect(rest).toEqual([]);
      expect(entry.tenantId).toBe("t1");
      expect(entry.dueAtMs).toBeLessThanOrEqual(1000);
      expect(entry.dueAtMs).toBeGreaterThan(999);
    });

    it("readyTenants returns due tenants earliest first, ties by id, at most `limit`", async () => {
      const type = fresh("pool");
      await coord.markReady(type, "b", 300);
      await coord.markReady(type, "a", 100);
      await coord.markReady(type, "c", 200);
      await coord.markReady(type, "later", 10_000);
      await coord.markReady(type, "y", 50);
      await coord.markReady(type, "x", 50);
      await coord.markReady(type, "42", 400); // ids stay strings, even when they look like numbers
      expect(await coord.readyTenants(type, 5000, 10)).toEqual([
        { tenantId: "x", dueAtMs: 50 },
        { tenantId: "y", dueAtMs: 50 },
        { tenantId: "a", dueAtMs: 100 },
        { tenantId: "c", dueAtMs: 200 },
        { tenantId: "b", dueAtMs: 300 },
        { tenantId: "42", dueAtMs: 400 },
      ]);
      expect((await coord.readyTenants(type, 5000, 2)).map((e) => e.tenantId)).toEqual(["x", "y"]);
      expect((await coord.readyTenants(type, 100, 10)).map((e) => e.tenantId)).toEqual(["x", "y", "a"]);
      expect(await coord.readyTenants(type, 49, 10)).toEqual([]);
      expect(await coord.readyTenants(type, 5000, 0)).toEqual([]);
      expect(await coord.readyTenants(fresh("empty-pool"), 5000, 10)).toEqual([]);
    });

    it("reschedule applies only while the score is the one the claimer read", async () => {
      const type = fresh("pool");
      await coord.markReady(type, "t1", 1000);
      const [read] = await coord.readyTenants(type, 1000, 1);
      expect(await coord.reschedule(type, "t1", read.dueAtMs, 5000)).toBe(true);
      expect(await coord.readyTenants(type, 1000, 10)).toEqual([]);
      expect(await coord.readyTenants(type, 5000, 10)).toEqual([{ tenantId: "t1", dueAtMs: 5000 }]);
      expect(await coord.reschedule(type, "t1", 1000, 9000)).toBe(false); // stale expectation
      expect(await coord.reschedule(type, "t1", 5000, null)).toBe(true); // no work left: removed
      expect(await coord.readyTenants(type, Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
      expect(await coord.reschedule(type, "t1", 5000, 6000)).toBe(false); // gone: nothing to move
      expect(await coord.reschedule(type, "never", 1, 2)).toBe(false);
    });

    it("a markReady that lowers the score between read and reschedule wins", async () => {
      const type = fresh("pool");
      await coord.markReady(type, "t1", 1000);
      const [read] = await coord.readyTenants(type, 1000, 1); // claimer reads, goes to Postgres…
      await coord.markReady(type, "t1", 500); // …meanwhile a job due earlier is created
      expect(await coord.reschedule(type, "t1", read.dueAtMs, 9000)).toBe(false);
      expect(await coord.readyTenants(type, 1000, 10)).toEqual([{ tenantId: "t1", dueAtMs: 500 }]);
    });

    it("a markReady with LATER work between read and reschedule also wins (the claimer's look missed it)", async () => {
      const type = fresh("pool");
      await coord.markReady(type, "t1", 1000);
      const [read] = await coord.readyTenants(type, 1000, 1);
      await coord.markReady(type, "t1", 2000); // committed after the claimer's Postgres look
      expect(await coord.reschedule(type, "t1", read.dueAtMs, 9000)).toBe(false);
      const [still] = await coord.readyTenants(type, 1000, 10);
      expect(still.tenantId).toBe("t1"); // still due: the next tick looks again and sees the new job
      // That next look reads the current score and succeeds.
      expect(await coord.reschedule(type, "t1", still.dueAtMs, 2000)).toBe(true);
      expect(await coord.readyTenants(type, 3000, 10)).toEqual([{ tenantId: "t1", dueAtMs: 2000 }]);
    });

    it("rebuildReady builds the index and sets the marker; a flush clears both", async () => {
      const type = fresh("pool");
      expect(await coord.hasReadyIndex(type)).toBe(false);
      await coord.rebuildReady(type, [
        { tenantId: "a", dueAtMs: 200 },
        { tenantId: "b", dueAtMs: 100 },
        { tenantId: "b", dueAtMs: 150 }, // listed twice: the earliest counts
      ]);
      expect(await coord.hasReadyIndex(type)).toBe(true);
      expect(await coord.hasReadyIndex(fresh("other-pool"))).toBe(false);
      expect(await coord.readyTenants(type, 1000, 10)).toEqual([
        { tenantId: "b", dueAtMs: 100 },
        { tenantId: "a", dueAtMs: 200 },
      ]);

      coord = await driver.flush(coord);
      expect(await coord.hasReadyIndex(type)).toBe(false);
      expect(await coord.readyTenants(type, 1000, 10)).toEqual([]);
    });

    it("rebuildReady keeps an earlier live score (a markReady that raced the Postgres snapshot)", async () => {
      const type = fresh("pool");
      await coord.markReady(type, "raced", 50);
      await coord.markReady(type, "a", 900);
      await coord.rebuildReady(type, [
        { tenantId: "raced", dueAtMs: 300 },
        { tenantId: "a", dueAtMs: 100 },
      ]);
      expect(await coord.readyTenants(type, 1000, 10)).toEqual([
        { tenantId: "raced", dueAtMs: 50 },
        { tenantId: "a", dueAtMs: 100 },
      ]);
    });

    it("rebuildReady handles large and empty rebuilds", async () => {
      const big = fresh("pool");
      const entries = Array.from({ length: 1234 }, (_, i) => ({ tenantId: `t${i}`, dueAtMs: 1000 + i }));
      await coord.rebuildReady(big, entries);
      const all = await coord.readyTenants(big, 10_000, 5000);
      expect(all).toHaveLength(1234);
      expect(all[0]).toEqual({ tenantId: "t0", dueAtMs: 1000 });
      expect(all[1233]).toEqual({ tenantId: "t1233", dueAtMs: 2233 });

      const empty = fresh("pool");
      await coord.rebuildReady(empty, []);
      expect(await coord.hasReadyIndex(empty)).toBe(true);
      expect(await coord.readyTenants(empty, 10_000, 10)).toEqual([]);
    });
  });

  describe("wake hints", () => {
    if (driver.hasPush)
      it("wake reaches onWake listeners; unsubscribing stops them", async () => {
        let calls = 0;
        const off = coord.onWake(() => calls++);
        // Pub/sub is best-effort and the subscriber connects lazily: publish until one arrives.
        for (let i = 0; i < 100 && calls === 0; i++) {
          await coord.wake();
          await new Promise((r) => setTimeout(r, 30));
        }
        expect(calls).toBeGreaterThan(0);
        off();
        await new Promise((r) => setTimeout(r, 50));
        const before = calls;
        await coord.wake();
        await new Promise((r) => setTimeout(r, 100));
        expect(calls).toBe(before);
      });
    else
      it("onWake is a documented no-op without push; wake still publishes", async () => {
        let calls = 0;
        const off = coord.onWake(() => calls++);
        await expect(coord.wake()).resolves.toBeUndefined();
        off();
        expect(calls).toBe(0);
      });
  });
});
