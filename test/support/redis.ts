// Real Redis for tests: one server shared by every test file, so each file works under
// its own random key prefix and deletes only that prefix — never FLUSHALL/FLUSHDB.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A fresh key prefix, e.g. "fwtest:coord:3f9a…:". */
export function testPrefix(label = "t"): string {
  return `fwtest:${label}:${randomBytes(6).toString("hex")}:`;
}

/** Delete every key under `prefix` (SCAN + DEL; the prefix is escaped so it matches literally). */
export async function deletePrefix(prefix: string, url = REDIS_URL): Promise<number> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
  let deleted = 0;
  try {
    await client.connect();
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", pattern, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) deleted += await client.del(...keys);
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
  return deleted;
}
