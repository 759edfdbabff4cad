// Upstash Redis over its REST API (@upstash/redis): a thin adapter onto the shared scripted
// coordinator. Runs on Node and in a Worker (fetch only).
//
// REST has no push, so onWake is a no-op: executors on this driver rely on their ≤1 s poll. wake()
// still PUBLISHes, so a redis:// executor subscribed to the same database hears it.
import { Redis } from "@upstash/redis";
import type { Coordinator } from "./coordinator.ts";
import { DEFAULT_PREFIX } from "./keys.ts";
import { createScriptedCoordinator, type RedisLike } from "./scripted-coordinator.ts";

export interface UpstashCoordinatorOptions {
  /** UPSTASH_REDIS_REST_URL. */
  url: string;
  /** UPSTASH_REDIS_REST_TOKEN. */
  token: string;
  /** Key prefix. Default "fairway:". */
  prefix?: string;
  /** Per-request timeout. Default 1000 ms (an HTTPS round trip, not a TCP one; still: degrade rather than wait). */
  commandTimeoutMs?: number;
}

export function createUpstashCoordinator(opts: UpstashCoordinatorOptions): Coordinator {
  const timeoutMs = opts.commandTimeoutMs ?? 1000;
  const client = new Redis({
    url: opts.url,
    token: opts.token,
    // Replies are parsed by the shared logic; the client's JSON.parse would turn tenant id "42" into 42.
    automaticDeserialization: false,
    // Fail fast like the TCP driver: no retry loop (the default is 5 retries with backoff), bounded wait.
    retry: false,
    signal: () => AbortSignal.timeout(timeoutMs),
    enableTelemetry: false,
  });

  const redis: RedisLike = {
    evalsha: (sha1, keys, args) => client.evalsha(sha1, keys, args),
    eval: (script, keys, args) => client.eval(script, keys, args),
    publish: (channel, message) => client.publish(channel, message),
  };

  return createScriptedCoordinator({
    kind: "upstash",
    redis,
    prefix: opts.prefix ?? DEFAULT_PREFIX,
    async close() {}, // stateless HTTP: nothing to release
  });
}
