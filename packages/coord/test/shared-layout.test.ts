// Both Redis drivers share one key layout and one set of scripts: what one writes, the other reads.
// Also: the EVALSHA → NOSCRIPT → EVAL fallback, on a script Redis has certainly never seen.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { Redis as Upstash } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisCoordinator, createUpstashCoordinator, type Coordinator } from "../src/index.ts";
import { runScript, type ScriptRunner } from "../src/hash.ts";
import { deletePrefix, REDIS_URL, testPrefix } from "../../../test/support/redis.ts";
import { startUpstashShim, type UpstashShim } from "../../../test/support/upstash-shim.ts";

const prefix = testPrefix("coord-layout");
let shim: UpstashShim;
let raw: Redis;
let tcp: Coordinator;
let rest: Coordinator;

beforeAll(async () => {
  shim = await startUpstashShim({ redisUrl: REDIS_URL, token: "layout-token" });
  raw = new Redis(REDIS_URL);
  tcp = createRedisCoordinator({ url: REDIS_URL, prefix });
  rest = createUpstashCoordinator({ url: shim.url, token: shim.token, prefix });
});

afterAll(async () => {
  await tcp.close();
  await rest.close();
  await shim.close();
  await deletePrefix(prefix);
  raw.disconnect();
});

describe("key layout", () => {
  it("uses ${prefix}ready:${type}, ${prefix}ready:${type}:built and ${prefix}rl:${key}", async () => {
    await tcp.markReady("email", "t1", 1234);
    expect(await raw.zscore(`${prefix}ready:email`, "t1")).toBe("1234");
    await rest.rebuildReady("email", [{ tenantId: "t2", dueAtMs: 99 }]);
    expect(await raw.exists(`${prefix}ready:email:built`)).toBe(1);
    expect(await raw.zrange(`${prefix}ready:email`, 0, -1)).toEqual(["t2", "t1"]);
    expect(await raw.keys(`${prefix}ready:email:rebuild:*`)).toEqual([]); // temp key merged and gone

    await rest.limit("tenant-9", 10, 1000, 5000);
    expect(await raw.hgetall(`${prefix}rl:tenant-9`)).toEqual({ tokens: "9", ts: "5000" });
    expect(await raw.pttl(`${prefix}rl:tenant-9`)).toBeGreaterThan(0);
  });

  it("one driver's writes are the other's reads", async () => {
    await rest.markReady("sms", "t1", 10);
    const [read] = await tcp.readyTenants("sms", 10, 5);
    expect(read).toEqual({ tenantId: "t1", dueAtMs: 10 });
    expect(await rest.reschedule("sms", "t1", read.dueAtMs, 20)).toBe(true);
    expect(await tcp.readyTenants("sms", 20, 5)).toEqual([{ tenantId: "t1", dueAtMs: 20 }]);
    // The limiter bucket is shared too.
    expect(await tcp.limit("shared", 2, 60_000, 1)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await rest.limit("shared", 2, 60_000, 1)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await tcp.limit("shared", 2, 60_000, 1)).allowed).toBe(false);
  });
});

describe("EVALSHA with NOSCRIPT fallback", () => {
  function counting(runner: ScriptRunner) {
    const calls: string[] = [];
    const wrapped: ScriptRunner = {
      evalsha: (...a) => {
        calls.push("evalsha");
        return runner.evalsha(...a);
      },
      eval: (...a) => {
        calls.push("eval");
        return runner.eval(...a);
      },
    };
    return { calls, wrapped };
  }
  // A comment makes the script (and so its SHA-1) new to this Redis.
  const script = () => `-- ${randomBytes(8).toString("hex")}\nreturn {KEYS[1], ARGV[1]}`;

  it("over ioredis: first call falls back to EVAL, the next hits EVALSHA", async () => {
    const s = script();
    const { calls, wrapped } = counting({
      evalsha: (sha, keys, args) => raw.evalsha(sha, keys.length, ...keys, ...args),
      eval: (src, keys, args) => raw.eval(src, keys.length, ...keys, ...args),
    });
    expect(await runScript(wrapped, s, [`${prefix}k`], ["v"])).toEqual([`${prefix}k`, "v"]);
    expect(await runScript(wrapped, s, [`${prefix}k`], ["w"])).toEqual([`${prefix}k`, "w"]);
    expect(calls).toEqual(["evalsha", "eval", "evalsha"]);
  });

  it("over @upstash/redis through the shim: same", async () => {
    const s = script();
    const client = new Upstash({
      url: shim.url,
      token: shim.token,
      automaticDeserialization: false,
      enableTelemetry: false,
    });
    const { calls, wrapped } = counting({
      evalsha: (sha, keys, args) => client.evalsha(sha, keys, args),
      eval: (src, keys, args) => client.eval(src, keys, args),
    });
    expect(await runScript(wrapped, s, [`${prefix}k`], ["v"])).toEqual([`${prefix}k`, "v"]);
    expect(await runScript(wrapped, s, [`${prefix}k`], ["w"])).toEqual([`${prefix}k`, "w"]);
    expect(calls).toEqual(["evalsha", "eval", "evalsha"]);
  });

  it("other script errors are not swallowed", async () => {
    const bad = `-- ${randomBytes(8).toString("hex")}\nreturn redis.call('NOPE')`;
    const runner: ScriptRunner = {
      evalsha: (sha, keys, args) => raw.evalsha(sha, keys.length, ...keys, ...args),
      eval: (src, keys, args) => raw.eval(src, keys.length, ...keys, ...args),
    };
    await expect(runScript(runner, bad, [], [])).rejects.toThrow(/unknown command|Unknown Redis command/i);
  });
});
