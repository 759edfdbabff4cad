// The Upstash REST shim itself (test/support/upstash-shim.ts): the protocol by hand with fetch, then
// the real @upstash/redis client end to end.
import { Redis as Upstash } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deletePrefix, REDIS_URL, testPrefix } from "../../../test/support/redis.ts";
import { startUpstashShim, type UpstashShim } from "../../../test/support/upstash-shim.ts";

const prefix = testPrefix("shim");
const TOKEN = "shim-secret";
let shim: UpstashShim;

beforeAll(async () => {
  shim = await startUpstashShim({ redisUrl: REDIS_URL, token: TOKEN });
});
afterAll(async () => {
  await shim.close();
  await deletePrefix(prefix);
});

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` },
) {
  const res = await fetch(`${shim.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

describe("auth on every route", () => {
  const routes: Array<[string, unknown]> = [
    ["/", ["PING"]],
    ["/pipeline", [["PING"]]],
    ["/multi-exec", [["PING"]]],
  ];
  it.each(routes)("%s: missing or wrong token → 401", async (path, body) => {
    const wrong: Array<Record<string, string>> = [{}, { authorization: "Bearer nope" }, { authorization: TOKEN }];
    for (const headers of wrong) {
      const res = await post(path, body, headers);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "Unauthorized" });
    }
    expect((await post(path, body)).status).toBe(200);
  });
});

describe("POST /", () => {
  it("runs one command; numbers and nulls pass as JSON; errors are 400 {error}", async () => {
    expect(await post("/", ["SET", `${prefix}a`, "héllo"])).toMatchObject({ status: 200, body: { result: "OK" } });
    expect((await post("/", ["GET", `${prefix}a`])).body).toEqual({ result: "héllo" });
    expect((await post("/", ["INCRBY", `${prefix}n`, 5])).body).toEqual({ result: 5 }); // unquoted number arg
    expect((await post("/", ["GET", `${prefix}missing`])).body).toEqual({ result: null });
    const err = await post("/", ["HGET", `${prefix}a`, "f"]);
    expect(err.status).toBe(400);
    expect(err.body.error).toMatch(/^WRONGTYPE/);
    expect((await post("/", ["NOSUCHCMD"])).body.error).toMatch(/^ERR unknown command/);
  });

  it("answers an upstash-sync-token for read-your-writes", async () => {
    const res = await post("/", ["PING"]);
    expect(res.headers.get("upstash-sync-token")).toMatch(/^\d+$/);
  });

  it("Upstash-Encoding: base64 encodes every string, recursively; numbers, null and a top-level OK stay", async () => {
    const enc = { authorization: `Bearer ${TOKEN}`, "upstash-encoding": "base64" };
    expect((await post("/", ["SET", `${prefix}b`, "héllo"], enc)).body).toEqual({ result: "OK" });
    expect((await post("/", ["GET", `${prefix}b`], enc)).body).toEqual({ result: b64("héllo") });
    expect((await post("/", ["GET", `${prefix}none`], enc)).body).toEqual({ result: null });
    expect((await post("/", ["INCR", `${prefix}c`], enc)).body).toEqual({ result: 1 });
    await post("/", ["ZADD", `${prefix}z`, 1, "m1", 2, "OK"]);
    expect((await post("/", ["ZRANGE", `${prefix}z`, 0, -1, "WITHSCORES"], enc)).body).toEqual({
      result: [b64("m1"), b64("1"), b64("OK"), b64("2")],
    });
    // Nested arrays (a Lua table of tables) are encoded all the way down.
    expect((await post("/", ["EVAL", "return {{'x', 7}, 'y'}", 0], enc)).body).toEqual({
      result: [[b64("x"), 7], b64("y")],
    });
  });
});

describe("POST /pipeline and /multi-exec", () => {
  it("a pipeline answers one {result}|{error} per command, in order", async () => {
    const k = `${prefix}p`;
    const res = await post("/pipeline", [
      ["SET", k, "1"],
      ["INCR", k],
      ["HGET", k, "f"],
      ["GET", k],
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { result: "OK" },
      { result: 2 },
      { error: expect.stringMatching(/^WRONGTYPE/) },
      { result: "2" },
    ]);
  });

  it("multi-exec runs in one transaction (base64 too) and rejects a transaction with a bad command", async () => {
    const k = `${prefix}m`;
    const enc = { authorization: `Bearer ${TOKEN}`, "upstash-encoding": "base64" };
    const res = await post(
      "/multi-exec",
      [
        ["SET", k, "x"],
        ["APPEND", k, "y"],
        ["GET", k],
      ],
      enc,
    );
    expect(res.body).toEqual([{ result: "OK" }, { result: 2 }, { result: b64("xy") }]);
    const aborted = await post("/multi-exec", [["SET", k, "z"], ["NOSUCHCMD"]]);
    expect(aborted.status).toBe(400);
    expect(aborted.body.error).toMatch(/EXECABORT/);
    expect((await post("/", ["GET", k])).body).toEqual({ result: "xy" }); // nothing applied
  });

  it("refuses malformed bodies and unknown routes", async () => {
    expect((await post("/pipeline", [])).status).toBe(400);
    expect((await post("/", "GET")).status).toBe(400);
    expect((await post("/nope", ["PING"])).status).toBe(404);
  });
});

describe("the real @upstash/redis client through the shim", () => {
  // Default settings on purpose: base64 responses, auto-pipelining (/pipeline), read-your-writes.
  const clients = () => [
    new Upstash({ url: shim.url, token: TOKEN, enableTelemetry: false }),
    new Upstash({
      url: shim.url,
      token: TOKEN,
      enableTelemetry: false,
      enableAutoPipelining: false,
      responseEncoding: false,
    }),
  ];

  it("set/get, with the client's JSON (de)serialisation", async () => {
    for (const [i, r] of clients().entries()) {
      await r.set(`${prefix}obj${i}`, { a: 1, s: "ünï" });
      expect(await r.get(`${prefix}obj${i}`)).toEqual({ a: 1, s: "ünï" });
      expect(await r.get(`${prefix}absent`)).toBeNull();
      expect(await r.incr(`${prefix}cnt${i}`)).toBe(1);
    }
  });

  it("zadd/zrange with scores", async () => {
    for (const [i, r] of clients().entries()) {
      const k = `${prefix}zz${i}`;
      expect(await r.zadd(k, { score: 2, member: "b" }, { score: 1, member: "a" })).toBe(2);
      expect(await r.zadd(k, { lt: true }, { score: 5, member: "a" })).toBe(0);
      expect(await r.zrange(k, 0, -1, { withScores: true })).toEqual(["a", 1, "b", 2]);
      expect(await r.zrange(k, 0, 1, { byScore: true })).toEqual(["a"]);
    }
  });

  it("eval, scriptLoad + evalsha, and NOSCRIPT surfacing as an error", async () => {
    for (const r of clients()) {
      expect(await r.eval("return {KEYS[1], ARGV[1], 3}", [`${prefix}k`], ["v"])).toEqual([`${prefix}k`, "v", 3]);
      const sha = await r.scriptLoad("return ARGV[1] .. '!'");
      expect(await r.evalsha(sha, [], ["hi"])).toBe("hi!");
      await expect(r.evalsha("0".repeat(40), [], [])).rejects.toThrow(/NOSCRIPT/);
    }
  });

  it("explicit pipeline and multi", async () => {
    const [r] = clients();
    const p = r.pipeline();
    p.set(`${prefix}pp`, "v");
    p.get(`${prefix}pp`);
    p.del(`${prefix}pp`);
    expect(await p.exec()).toEqual(["OK", "v", 1]);
    const m = r.multi();
    m.incr(`${prefix}mm`);
    m.incr(`${prefix}mm`);
    expect(await m.exec()).toEqual([1, 2]);
  });

  it("a wrong token fails with the service's error", async () => {
    const r = new Upstash({ url: shim.url, token: "wrong", enableTelemetry: false, retry: false });
    await expect(r.get(`${prefix}x`)).rejects.toThrow(/Unauthorized/);
  });
});
