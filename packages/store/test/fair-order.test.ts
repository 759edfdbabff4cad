// fairOrder (claim.ts): a claimed batch starts interleaved as its WFQ slots are, not tenant by tenant.
import { expect, it } from "vitest";
import { fairOrder } from "@fairway/store";

const rows = (tenant: string, n: number, priority = 0) =>
  Array.from({ length: n }, (_, i) => ({ id: `${tenant}${i}`, tenantId: tenant, priority }));

it("spreads each tenant's triggers evenly over the batch, in proportion to its share", () => {
  // A claim returned 2 of a, 4 of b, 2 of c, tenant by tenant.
  const order = fairOrder([...rows("a", 2), ...rows("b", 4), ...rows("c", 2)]).map((r) => r.tenantId).join("");
  expect(order).toBe("bacbbacb");
  // Any prefix holds each tenant close to its share (here within one trigger).
  const big = fairOrder([...rows("a", 10), ...rows("b", 20), ...rows("c", 50)]);
  for (let n = 1; n <= big.length; n++) {
    const prefix = big.slice(0, n);
    for (const [t, share] of [["a", 10 / 80], ["b", 20 / 80], ["c", 50 / 80]] as const) {
      expect(Math.abs(prefix.filter((r) => r.tenantId === t).length - share * n)).toBeLessThanOrEqual(1);
    }
  }
});

it("starts a tenant's higher priorities first and keeps the claim's order within a priority", () => {
  const out = fairOrder([{ id: "x1", tenantId: "x", priority: 0 }, { id: "x2", tenantId: "x", priority: 5 }, { id: "x3", tenantId: "x", priority: 0 }]);
  expect(out.map((r) => r.id)).toEqual(["x2", "x1", "x3"]);
});
