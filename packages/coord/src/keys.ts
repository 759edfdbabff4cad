// Key layout shared by both Redis drivers (redis:// and Upstash REST), so one deployment may mix them.
// Every key starts with the caller's prefix (default "fairway:"), which is also how tests isolate
// themselves on a shared Redis.

export const DEFAULT_PREFIX = "fairway:";

export function keysFor(prefix: string) {
  return {
    /** zset: member = tenant id, score = earliest due time (epoch ms) of that tenant's work in pool `type`. */
    ready: (type: string) => `${prefix}ready:${type}`,
    /** string marker, set only by rebuildReady: its absence means "flushed or never built". */
    readyBuilt: (type: string) => `${prefix}ready:${type}:built`,
    /** zset under construction by rebuildReady; random suffix so concurrent rebuilds never mix. */
    readyRebuild: (type: string, id: string) => `${prefix}ready:${type}:rebuild:${id}`,
    /** hash {tokens, ts}: one token bucket per limiter key. */
    limiter: (key: string) => `${prefix}rl:${key}`,
    /** pub/sub channel for wake hints. */
    wake: `${prefix}wake`,
  };
}
