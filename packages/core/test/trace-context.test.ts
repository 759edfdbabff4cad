import { describe, expect, it } from "vitest";
import { parseTraceparent, parseTracestate, triggerTraceParent } from "../src/index.ts";

describe("parseTraceparent", () => {
  it("reads a version-00 traceparent and its sampled flag", () => {
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toEqual({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      sampled: true,
    });
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.sampled).toBe(false);
  });

  it("refuses all-zero ids, other versions and malformed values", () => {
    for (const bad of [
      `00-${"0".repeat(32)}-00f067aa0ba902b7-01`,
      `00-4bf92f3577b34da6a3ce929d0e0e4736-${"0".repeat(16)}-01`,
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
      "00-not-a-trace-01",
      "",
    ])
      expect(parseTraceparent(bad)).toBeNull();
  });
});

describe("parseTracestate", () => {
  it("keeps valid members and drops a malformed or oversized value", () => {
    expect(parseTracestate(" rojo=00f067aa0ba902b7 , congo=t61rcWkgMzE ")).toBe(
      "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
    );
    expect(parseTracestate("no equals")).toBeNull();
    expect(parseTracestate(`a=${"x".repeat(600)}`)).toBeNull();
    expect(parseTracestate(undefined)).toBeNull();
  });
});

describe("triggerTraceParent", () => {
  const job = { parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", join: true };

  it("joins a one-time job's create context", () => {
    expect(triggerTraceParent("trg_1", job)).toEqual({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      sampled: true,
      own: false,
    });
  });

  it("gives a cron fire, or a job without context, a trace of its own derived from its trigger id", () => {
    const a = triggerTraceParent("trg_01HZYA", { ...job, join: false });
    expect(a.own).toBe(true);
    expect(a.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(a.traceId).not.toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(triggerTraceParent("trg_01HZYA", null)).toEqual(a);
    expect(triggerTraceParent("trg_01HZYB", null).traceId).not.toBe(a.traceId);
  });
});
