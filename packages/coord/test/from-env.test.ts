// Driver choice from the environment. Construction connects nothing, so no server is needed.
import { describe, expect, it } from "vitest";
import { createCoordinatorFromEnv } from "../src/index.ts";

describe("createCoordinatorFromEnv", () => {
  const cases: Array<[string, Record<string, string | undefined>, string]> = [
    ["nothing set → in-process", {}, "memory"],
    ["REDIS_URL → redis://", { REDIS_URL: "redis://127.0.0.1:6379" }, "redis"],
    [
      "Upstash URL + token → Upstash, even with REDIS_URL",
      {
        UPSTASH_REDIS_REST_URL: "https://x.upstash.io",
        UPSTASH_REDIS_REST_TOKEN: "t",
        REDIS_URL: "redis://127.0.0.1:6379",
      },
      "upstash",
    ],
    ["Upstash URL without token → not Upstash", { UPSTASH_REDIS_REST_URL: "https://x.upstash.io" }, "memory"],
    [
      "blank values count as unset",
      { REDIS_URL: "  ", UPSTASH_REDIS_REST_URL: "", UPSTASH_REDIS_REST_TOKEN: "" },
      "memory",
    ],
  ];
  it.each(cases)("%s", async (_name, env, kind) => {
    const c = createCoordinatorFromEnv(env, "fwtest:env:");
    expect(c.kind).toBe(kind);
    await c.close();
  });
});
