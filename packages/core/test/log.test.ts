import { expect, it } from "vitest";
import { createLogger, silentLogger } from "../src/log.ts";

it("writes one JSON line per call at or above its level, with the child's fields", () => {
  const lines: string[] = [];
  const log = createLogger({ level: "info", write: (l) => lines.push(l) }).child({ requestId: "req_1" });
  log.debug("hidden");
  log.info("request", { status: 201, err: new Error("boom") });
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0])).toMatchObject({
    level: "info",
    msg: "request",
    requestId: "req_1",
    status: 201,
    err: "boom",
  });
});

it("the silent logger builds nothing: its children are itself", () => {
  expect(silentLogger.child({ requestId: "req_1" })).toBe(silentLogger);
  expect(silentLogger.child({ a: 1 }).child({ b: 2 })).toBe(silentLogger);
  expect(() => silentLogger.error("x", { err: new Error("y") })).not.toThrow();
});
