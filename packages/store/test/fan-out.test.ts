// A layout's fanOut: the single-node layout writes a batch as one group for every tenant; the
// per-tenant layout groups it by tenant in order, writes a few tenants at once, and each tenant's
// outcome is its own.
import { expect, it } from "vitest";
import { ALL_TENANTS, layoutNamed } from "@fairway/store";

const items = [
  { t: "b", n: 1 },
  { t: "a", n: 2 },
  { t: "b", n: 3 },
];

it("single: one group, for every tenant, in order", async () => {
  const written = await layoutNamed("single").fanOut(
    items,
    (x) => x.t,
    async (scope, xs) => [scope, xs.map((x) => x.n)],
  );
  expect(written.map((w) => w.outcome)).toEqual([{ status: "fulfilled", value: [ALL_TENANTS, [1, 2, 3]] }]);
  expect(
    await layoutNamed("single").fanOut(
      [],
      () => "a",
      async () => 1,
    ),
  ).toEqual([]);
});

it("per-tenant: groups by tenant in order of first appearance, each tenant's items in their order", async () => {
  const written = await layoutNamed("per-tenant").fanOut(
    items,
    (x) => x.t,
    async (_s, xs) => xs.map((x) => x.n),
  );
  expect(written.map((w) => [w.scope.tenantId, w.outcome.status === "fulfilled" && w.outcome.value])).toEqual([
    ["b", [1, 3]],
    ["a", [2]],
  ]);
});

it("per-tenant: writes at most four tenants at once, and a failure is that tenant's alone", async () => {
  let running = 0;
  let most = 0;
  const written = await layoutNamed("per-tenant").fanOut(
    ["a", "b", "c", "d", "e", "f"],
    (x) => x,
    async (scope) => {
      most = Math.max(most, ++running);
      await new Promise((r) => setImmediate(r)); // the writes started with it run meanwhile
      running--;
      if (scope.tenantId === "c") throw new Error("c failed");
      return scope.tenantId;
    },
  );
  expect(most).toBe(4);
  expect(
    written.map((w) => (w.outcome.status === "fulfilled" ? w.outcome.value : (w.outcome.reason as Error).message)),
  ).toEqual(["a", "b", "c failed", "d", "e", "f"]);
});
