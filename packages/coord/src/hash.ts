// EVALSHA with a NOSCRIPT fallback to EVAL, as upstash/ratelimit-js does (src/hash.ts): the script
// body travels once per Redis (re)start instead of on every call, and a flushed script cache
// (SCRIPT FLUSH, failover, fresh Redis) costs one extra round trip, never an error.

/** What the shared logic needs from a Redis client to run scripts. Both drivers' adapters provide it. */
export interface ScriptRunner {
  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown>;
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
}

const digests = new Map<string, Promise<string>>();

/** SHA-1 hex of the script, via WebCrypto so the same code runs on Node and in a Worker. Memoised. */
function sha1Hex(script: string): Promise<string> {
  let digest = digests.get(script);
  if (!digest) {
    digest = crypto.subtle
      .digest("SHA-1", new TextEncoder().encode(script))
      .then((buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join(""));
    digests.set(script, digest);
  }
  return digest;
}

export async function runScript(redis: ScriptRunner, script: string, keys: string[], args: string[]): Promise<unknown> {
  const sha = await sha1Hex(script);
  try {
    return await redis.evalsha(sha, keys, args);
  } catch (err) {
    // ioredis: "NOSCRIPT No matching script…"; @upstash/redis wraps it: "…Command failed: NOSCRIPT …".
    if (err instanceof Error && err.message.includes("NOSCRIPT")) return redis.eval(script, keys, args);
    throw err;
  }
}
