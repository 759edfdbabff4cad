// Driver choice from the environment: Upstash REST if both its variables are set,
// else redis:// if REDIS_URL is, else in-process.
import type { Coordinator } from "./coordinator.ts";
import { createMemoryCoordinator } from "./memory-driver.ts";
import { createRedisCoordinator } from "./redis-driver.ts";
import { createUpstashCoordinator } from "./upstash-driver.ts";

export function createCoordinatorFromEnv(env: Record<string, string | undefined>, prefix?: string): Coordinator {
  const upstashUrl = env.UPSTASH_REDIS_REST_URL?.trim();
  const upstashToken = env.UPSTASH_REDIS_REST_TOKEN?.trim();
  if (upstashUrl && upstashToken) return createUpstashCoordinator({ url: upstashUrl, token: upstashToken, prefix });
  const redisUrl = env.REDIS_URL?.trim();
  if (redisUrl) return createRedisCoordinator({ url: redisUrl, prefix });
  return createMemoryCoordinator();
}
