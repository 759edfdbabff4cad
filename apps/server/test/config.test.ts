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
  expect(() => loadConfig({ UPSTASH_REDIS_REST_URL: "https://x.upstash.io" })).toThrow(
    /both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN/,
  );
  expect(() => loadConfig({ UPSTASH_REDIS_REST_TOKEN: "t" })).toThrow(/UPSTASH_REDIS_REST_TOKEN: set both/);
  expect(
    loadConfig({ UPSTASH_REDIS_REST_URL: "https://x.upstash.io", UPSTASH_REDIS_REST_TOKEN: "t" })
      .UPSTASH_REDIS_REST_TOKEN,
  ).toBe("t");
});

it("reports every problem on one line, echoing values but never a URL or token", () => {
  let message = "";
  try {
    loadConfig({ PORT: "eighty", FAIRWAY_ROLE: "scheduler", FAIRWAY_ADMIN_TOKEN: "short-secret" });
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message.split("\n")).toHaveLength(1);
  expect(message).toMatch(/^invalid configuration: .*PORT: .*\(got "eighty"\).*FAIRWAY_ROLE: .*\(got "scheduler"\)/);
  expect(message).toMatch(/FAIRWAY_ADMIN_TOKEN/);
  expect(message).not.toContain("short-secret");
});

it("takes a fixed port for the embedded PostgreSQL, or none", () => {
  expect(loadConfig({}).FAIRWAY_EMBEDDED_PG_PORT).toBeUndefined();
  expect(loadConfig({ FAIRWAY_EMBEDDED_PG_PORT: "5433" }).FAIRWAY_EMBEDDED_PG_PORT).toBe(5433);
  expect(() => loadConfig({ FAIRWAY_EMBEDDED_PG_PORT: "70000" })).toThrow(/FAIRWAY_EMBEDDED_PG_PORT/);
});
