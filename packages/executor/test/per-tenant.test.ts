// per-tenant.ts: a batch grouped by tenant in order, written a few tenants at once, each tenant's
// outcome its own.
import { expect, it } from "vitest";
import { byTenant, eachTenant } from "../src/per-tenant.ts";

it("groups by tenant in order of first appearance, each tenant's items in their order", () => {
  const groups = byTenant(
    [
      { t: "b", n: 1 },
      { t: "a", n: 2 },
      { t: "b", n: 3 },
    ],
    (x) => x.t,
  );
  expect([...groups].map(([t, xs]) => [t, xs.map((x) => x.n)])).toEqual([
    ["b", [1, 3]],
    ["a", [2]],
  ]);
});

it("writes at most `limit` tenants at once, and a failure is that tenant's alone", async () => {
  const groups = byTenant(["a", "b", "c", "d", "e"], (x) => x);
  let running = 0;
  let most = 0;
  const outcomes = await eachTenant(
    groups,
    async (tenant) => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (tenant === "c") throw new Error("c failed");
      return tenant;
    },
    2,
  );
  expect(most).toBe(2);
  expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message))).toEqual([
    "a",
    "b",
    "c failed",
    "d",
    "e",
  ]);
});
