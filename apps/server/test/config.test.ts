import { expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";

it("keys Redis under fairway: unless FAIRWAY_REDIS_PREFIX says otherwise", () => {
  expect(loadConfig({}).FAIRWAY_REDIS_PREFIX).toBe("fairway:");
  expect(loadConfig({ FAIRWAY_REDIS_PREFIX: "" }).FAIRWAY_REDIS_PREFIX).toBe("fairway:"); // unset, as every empty variable
  expect(loadConfig({ FAIRWAY_REDIS_PREFIX: "staging:fw:" }).FAIRWAY_REDIS_PREFIX).toBe("staging:fw:");
});

it("refuses a prefix over 100 characters, naming the variable", () => {
  expect(() => loadConfig({ FAIRWAY_REDIS_PREFIX: "x".repeat(101) })).toThrow(/FAIRWAY_REDIS_PREFIX/);
});

it("refuses half an Upstash configuration instead of falling back to another coordinator", () => {
  expect(() => loadConfig({ UPSTASH_REDIS_REST_URL: "https://x.upstash.io" })).toThrow(/both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN/);
  expect(() => loadConfig({ UPSTASH_REDIS_REST_TOKEN: "t" })).toThrow(/UPSTASH_REDIS_REST_TOKEN: set both/);
  expect(loadConfig({ UPSTASH_REDIS_REST_URL: "https://x.upstash.io", UPSTASH_REDIS_REST_TOKEN: "t" }).UPSTASH_REDIS_REST_TOKEN).toBe("t");
});
