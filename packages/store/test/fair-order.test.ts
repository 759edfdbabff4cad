// fairOrder (claim.ts): a claimed batch starts in the order of its WFQ slots, interleaved, not tenant by
// tenant; each trigger is given its slot, and the pool clock where its tenant started at it.
import { expect, it } from "vitest";
import { fairOrder } from "../src/sql/claim.ts";

const rows = (tenant: string, n: number, priority = 0) =>
  Array.from({ length: n }, (_, i) => ({
    id: `${tenant}${i}`,
    tenantId: tenant,
    priority,
    vt: 0,
    vclock: null as number | null,
  }));

it("orders a claim by its slots: each tenant's k-th at vstart + (k − 1) · cost ÷ weight", () => {
  // A claim returned 2 of a (weight 1), 4 of b (weight 2), 2 of c (weight 1), tenant by tenant; equal costs.
  const out = fairOrder(
    [...rows("a", 2), ...rows("b", 4), ...rows("c", 2)],
    { a: [10, 1], b: [10, 0.5], c: [10, 1] },
    10,
  );
  expect(out.map((r) => r.tenantId).join("")).toBe("abcbabcb");
  expect(out.map((r) => r.vt)).toEqual([10, 10, 10, 10.5, 11, 11, 11, 11.5]);
  // Any prefix holds each tenant within two triggers of its weighted share (here 1.25 at most: at a
  // shared start, ties go by tenant).
  const big = fairOrder(
    [...rows("a", 10), ...rows("b", 20), ...rows("c", 50)],
    { a: [0, 5], b: [0, 2.5], c: [0, 1] },
    0,
  );
  for (let n = 1; n <= big.length; n++) {
    const prefix = big.slice(0, n);
    for (const [t, share] of [
      ["a", 10 / 80],
      ["b", 20 / 80],
      ["c", 50 / 80],
    ] as const) {
      expect(Math.abs(prefix.filter((r) => r.tenantId === t).length - share * n)).toBeLessThan(2);
    }
  }
});

it("starts a tenant owed earlier slots first, and marks the tenants that started at the clock", () => {
  // b was served recently (its virtual time is ahead of the clock); a comes back from idle at the clock.
  const out = fairOrder([...rows("b", 3), ...rows("a", 3)], { a: [100, 1], b: [101.5, 1] }, 100);
  expect(out.map((r) => r.id)).toEqual(["a0", "a1", "b0", "a2", "b1", "b2"]);
  expect(out.filter((r) => r.vclock === 100).map((r) => r.tenantId)).toEqual(["a", "a", "a"]);
  expect(out.filter((r) => r.vclock === null).map((r) => r.tenantId)).toEqual(["b", "b", "b"]);
});

it("starts a tenant's higher priorities first and keeps the claim's order within a priority", () => {
  const x = rows("x", 3);
  x[1].priority = 5;
  const out = fairOrder(x, { x: [0, 1] }, 0);
  expect(out.map((r) => r.id)).toEqual(["x1", "x0", "x2"]);
  expect(out.map((r) => r.vt)).toEqual([0, 1, 2]);
});

it("starts a keyed tenant's triggers in its key-slot order, given by id, and leaves each trigger's fields as they were", () => {
  const k = rows("k", 3);
  const x = rows("x", 2);
  x[1].priority = 5;
  const fields = Object.keys(k[0]);
  const out = fairOrder(
    [...k, ...x],
    { k: [0, 1], x: [0.5, 1] },
    0,
    new Map([
      ["k2", 0],
      ["k0", 1],
      ["k1", 2],
    ]),
  );
  expect(out.map((r) => r.id)).toEqual(["k2", "x1", "k0", "x0", "k1"]);
  // The ranks travel beside the rows, not on them: no field is added to or deleted from a trigger.
  for (const r of out) expect(Object.keys(r)).toEqual(fields);
});
