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
