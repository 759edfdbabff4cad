import { expect, it } from "vitest";
import { createServerMetrics } from "../src/metrics.ts";

it("names every metric fairway_ once: prom-client's process metrics are fairway_process_*, not fairway_process_process_*", async () => {
  const names = (await createServerMetrics().registry.getMetricsAsJSON()).map((m) => m.name);
  expect(names).toContain("fairway_process_cpu_user_seconds_total");
  expect(names).toContain("fairway_nodejs_eventloop_lag_seconds");
  expect(names).toContain("fairway_attempt_duration_seconds");
  expect(
    names.filter((n) => !n.startsWith("fairway_") || /fairway_.*fairway_|process_process|_nodejs_nodejs/.test(n)),
  ).toEqual([]);
  expect(names.filter((n) => n.startsWith("fairway_process_nodejs_"))).toEqual([]);
});
