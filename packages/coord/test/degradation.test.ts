// Redis down must mean "degraded", fast — never a hang, never a crashed process (see src/index.ts).
import { createServer, connect, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { createRedisCoordinator, createUpstashCoordinator, type Coordinator } from "../src/index.ts";
import { deletePrefix, REDIS_URL, testPrefix } from "../../../test/support/redis.ts";

const started: Coordinator[] = [];
afterAll(async () => {
  for (const c of started) await c.close();
});

/** Every method that talks to Redis, called once. */
const calls = (c: Coordinator) => [
  () => c.limit("k", 10, 1000),
  () => c.markReady("pool", "t1", 1),
  () => c.readyTenants("pool", Date.now(), 10),
  () => c.reschedule("pool", "t1", 1, 2),
  () => c.rebuildReady("pool", [{ tenantId: "t1", dueAtMs: 1 }]),
  () => c.hasReadyIndex("pool"),
  () => c.wake(),
];

async function expectFastRejections(c: Coordinator, withinMs: number) {
  for (let round = 0; round < 2; round++) {
    for (const call of calls(c)) {
      const t0 = performance.now();
      await expect(call()).rejects.toThrow();
      expect(performance.now() - t0).toBeLessThan(withinMs);
    }
  }
}

describe("redis:// coordinator with nothing listening", () => {
  it("rejects every call quickly, and keeps rejecting while it reconnects in the background", async () => {
    const errors: Error[] = [];
    const c = createRedisCoordinator({
      url: "redis://127.0.0.1:1",
      commandTimeoutMs: 200,
      onError: (e) => errors.push(e),
    });
    started.push(c);
    await expectFastRejections(c, 1000);
    // The subscriber connection fails too, in the background, without an unhandled error.
    const off = c.onWake(() => {});
    await new Promise((r) => setTimeout(r, 300));
    off();
    expect(errors.length).toBeGreaterThan(0); // reported to onError, not thrown at the process
  });

  it("a black-holed address is bounded by the command timeout too", async () => {
    // 10.255.255.1 is unroutable here: connect neither succeeds nor is refused.
    const c = createRedisCoordinator({ url: "redis://10.255.255.1:6379", commandTimeoutMs: 200 });
    started.push(c);
    const t0 = performance.now();
    await expect(c.hasReadyIndex("pool")).rejects.toThrow();
    expect(performance.now() - t0).toBeLessThan(1500);
  });
});

describe("redis:// coordinator across an outage", () => {
  it("fails fast while Redis is unreachable, then recovers on its own once it is back", async () => {
    // A TCP relay to the real Redis that this test can take down and bring back on the same port.
    const target = new URL(REDIS_URL);
    const sockets = new Set<Socket>();
    const relay = () =>
      createServer((client) => {
        const upstream = connect(Number(target.port || 6379), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("error", () => s.destroy());
          s.on("close", () => sockets.delete(s));
        }
        client.pipe(upstream).pipe(client);
      });
    const listen = (server: Server, port = 0) =>
      new Promise<number>((resolve) =>
        server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
      );
    const stop = (server: Server) => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    };

    const prefix = testPrefix("coord-outage");
    let server = relay();
    const port = await listen(server);
    await stop(server); // down from the start: the very first connect fails
    const c = createRedisCoordinator({ url: `redis://127.0.0.1:${port}`, prefix, commandTimeoutMs: 200 });
    started.push(c);
    const eventually = async <T>(call: () => Promise<T>): Promise<T> => {
      for (let i = 0; ; i++) {
        try {
          return await call();
        } catch (err) {
          if (i >= 60) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    try {
      await expect(c.markReady("pool", "t1", 5)).rejects.toThrow();
      server = relay();
      await listen(server, port); // Redis comes up: ioredis' background reconnect finds it
      await eventually(() => c.markReady("pool", "t1", 5));
      await stop(server); // outage
      await expect(c.readyTenants("pool", 10, 10)).rejects.toThrow();
      server = relay();
      await listen(server, port); // back again
      expect(await eventually(() => c.readyTenants("pool", 10, 10))).toEqual([{ tenantId: "t1", dueAtMs: 5 }]);
    } finally {
      await stop(server);
      await deletePrefix(prefix);
    }
  });
});

describe("Upstash coordinator with nothing listening", () => {
  it("rejects every call quickly (no retry loop)", async () => {
    const c = createUpstashCoordinator({ url: "http://127.0.0.1:1", token: "t", commandTimeoutMs: 300 });
    started.push(c);
    await expectFastRejections(c, 1000);
  });
});
