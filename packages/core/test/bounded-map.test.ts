import { expect, test } from "vitest";
import { BoundedMap } from "../src/bounded-map.ts";

test("holds at most max entries, evicting the oldest added", () => {
  const m = new BoundedMap<string, number>(2);
  m.set("a", 1).set("b", 2).set("c", 3);
  expect([...m.keys()]).toEqual(["b", "c"]);
});

test("setting a key it holds replaces the value and evicts nothing", () => {
  const m = new BoundedMap<string, number>(2);
  m.set("a", 1).set("b", 2).set("a", 10);
  expect([...m.entries()]).toEqual([
    ["a", 10],
    ["b", 2],
  ]);
});

test("getOrSet makes a value once per key and keeps it", () => {
  const m = new BoundedMap<string, number>(10);
  let made = 0;
  const make = () => ++made;
  expect(m.getOrSet("k", make)).toBe(1);
  expect(m.getOrSet("k", make)).toBe(1);
  expect(made).toBe(1);
});
