// redis:// over TCP (ioredis): a thin adapter onto the shared scripted coordinator.
//
// Failures surface fast instead of queueing: a command fails after `commandTimeoutMs`, is retried at
// most once across a reconnect, and is rejected at once while disconnected (no offline queue); the
// connection heals in the background. 'error' events are swallowed (or handed to `onError`): an
// unhandled one would only be logged by ioredis, but a coordinator must never be the reason a
// process dies.
import { Redis } from "ioredis";
import type { Coordinator } from "./coordinator.ts";
import { DEFAULT_PREFIX } from "./keys.ts";
import { createScriptedCoordinator, type RedisLike } from "./scripted-coordinator.ts";

export interface RedisCoordinatorOptions {
  /** redis:// or rediss:// URL. */
  url: string;
  /** Key prefix. Default "fairway:". */
  prefix?: string;
  /** Per-command timeout. Default 500 ms: the coordinator is an optimisation, waiting longer is worse than degrading. */
  commandTimeoutMs?: number;
  /** Connection errors (already handled). Default: ignored. */
  onError?: (err: Error) => void;
}

export function createRedisCoordinator(opts: RedisCoordinatorOptions): Coordinator {
  const commandTimeoutMs = opts.commandTimeoutMs ?? 500;
  const onError = opts.onError ?? (() => {});
  const client = new Redis(opts.url, {
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
    // A black-holed host must not hold the first command for ioredis' default 10 s.
    connectTimeout: Math.max(1000, commandTimeoutMs * 2),
  });
  client.on("error", onError);

  // lazyConnect + no offline queue would reject the very first command ("stream isn't writeable")
  // while the socket connects, so the first use waits for the connection — bounded by
  // commandTimeoutMs. A failed connect is not thrown here: the command that follows fails fast
  // with the real state, and ioredis keeps reconnecting in the background.
  let firstConnect: Promise<void> | undefined;
  async function connected(): Promise<void> {
    if (client.status === "wait") firstConnect ??= client.connect().catch(() => {});
    if (firstConnect && client.status !== "ready") {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, commandTimeoutMs)));
      await Promise.race([firstConnect, timeout]);
      clearTimeout(timer);
    }
  }

  const redis: RedisLike = {
    async evalsha(sha1, keys, args) {
      await connected();
      return client.evalsha(sha1, keys.length, ...keys, ...args);
    },
    async eval(script, keys, args) {
      await connected();
      return client.eval(script, keys.length, ...keys, ...args);
    },
    async publish(channel, message) {
      await connected();
      return client.publish(channel, message);
    },
  };

  let subscriber: Redis | undefined;
  return createScriptedCoordinator({
    kind: "redis",
    redis,
    prefix: opts.prefix ?? DEFAULT_PREFIX,
    // A connection in subscribe mode can run no other command, hence a second one, created on first
    // use. It queues SUBSCRIBE until connected and re-subscribes after every reconnect (ioredis'
    // autoResubscribe), so a Redis restart costs wake hints only while it is down.
    subscribe(channel, onMessage) {
      const sub = client.duplicate({
        lazyConnect: false,
        enableOfflineQueue: true,
        commandTimeout: undefined,
        maxRetriesPerRequest: null,
      });
      subscriber = sub;
      sub.on("error", onError);
      sub.on("message", (ch: string) => {
        if (ch === channel) onMessage();
      });
      sub.subscribe(channel).catch(onError);
      return () => {
        sub.disconnect();
        if (subscriber === sub) subscriber = undefined;
      };
    },
    async close() {
      subscriber?.disconnect();
      // disconnect(), not quit(): quit waits for a reply that a down Redis never sends.
      client.disconnect();
    },
  });
}
