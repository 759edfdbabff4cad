// The pool's concurrency bound (limit.ts): never more than `concurrency` at once, lowest key first and
// first in first out among equal keys, a rejected task frees its slot like a resolved one, and a change of
// concurrency applies at once.
import { describe, expect, it } from "vitest";
import { Limit } from "../src/limit.ts";

const tick = () => new Promise((r) => setImmediate(r));

/** Tasks that finish when told; records the order they started in and the most running at once. */
function tasks(limit: Limit) {
  const started: number[] = [];
  const finish = new Map<number, { ok: () => void; fail: () => void }>();
  let running = 0;
  let most = 0;
  const add = (i: number, key?: number) =>
    limit.run(() => {
      started.push(i);
      most = Math.max(most, ++running);
      return new Promise<void>((ok, fail) => finish.set(i, { ok, fail })).finally(() => running--);
    }, key);
  return { started, finish, add, most: () => most, running: () => running };
}

describe("Limit", () => {
  it("runs at most `concurrency` tasks at once, in the order they came", async () => {
    const limit = new Limit(3);
    const t = tasks(limit);
    for (let i = 0; i < 10; i++) t.add(i);
    expect(t.started).toEqual([0, 1, 2]);
    expect([limit.activeCount, limit.pendingCount]).toEqual([3, 7]);
    for (let i = 0; i < 10; i++) {
      t.finish.get(i)!.ok();
      await tick();
    }
    expect(t.started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(t.most()).toBe(3);
    expect([limit.activeCount, limit.pendingCount]).toEqual([0, 0]);
  });

  it("starts the waiting task with the lowest key, and the first of equal keys; remembers the last key started", async () => {
    const limit = new Limit(1);
    const t = tasks(limit);
    expect(limit.lastStartedKey).toBeNull();
    t.add(0, 5); // starts at once: a slot is free
    for (const [i, key] of [
      [1, 9],
      [2, 3],
      [3, 7],
      [4, 3],
      [5, 9],
      [6, 1],
    ] as const)
      t.add(i, key);
    expect(limit.lastStartedKey).toBe(5);
    for (let i = 0; i < 7; i++) {
      t.finish.get(t.started[i])!.ok();
      await tick();
    }
    expect(t.started).toEqual([0, 6, 2, 4, 3, 1, 5]);
    expect(limit.lastStartedKey).toBe(9);
    expect(t.most()).toBe(1);
  });

  it("keeps order and count through a long queue of mixed keys", async () => {
    const limit = new Limit(3);
    const order: number[] = [];
    const n = 3000;
    const keyOf = (i: number) => (i * 7919) % 1000; // each key 3 times, in no order
    let left = n;
    await new Promise<void>((done) => {
      for (let i = 0; i < n; i++)
        limit.run(async () => {
          order.push(i);
          await null;
          if (--left === 0) done();
        }, keyOf(i));
    });
    // The first three started at once; every other one in (key, arrival) order.
    const rest = Array.from({ length: n - 3 }, (_, j) => j + 3).sort((a, b) => keyOf(a) - keyOf(b) || a - b);
    expect(order).toEqual([0, 1, 2, ...rest]);
  });

  it("a rejected task frees its slot", async () => {
    const limit = new Limit(1);
    const t = tasks(limit);
    t.add(0);
    t.add(1);
    t.finish.get(0)!.fail();
    await tick();
    expect(t.started).toEqual([0, 1]);
    expect(limit.activeCount).toBe(1);
  });

  it("more concurrency starts queued tasks at once; less lets running ones finish", async () => {
    const limit = new Limit(2);
    const t = tasks(limit);
    for (let i = 0; i < 6; i++) t.add(i);
    limit.setConcurrency(4);
    expect(t.started).toEqual([0, 1, 2, 3]);
    limit.setConcurrency(1);
    for (const i of [0, 1, 2]) t.finish.get(i)!.ok();
    await tick();
    expect(t.started).toEqual([0, 1, 2, 3]); // 3 still runs: nothing new starts
    t.finish.get(3)!.ok();
    await tick();
    expect(t.started).toEqual([0, 1, 2, 3, 4]);
    expect(t.running()).toBe(1);
  });

  it("keeps order and count through a long queue of equal keys", async () => {
    const limit = new Limit(7);
    const order: number[] = [];
    let running = 0;
    let most = 0;
    const n = 5000;
    let left = n;
    await new Promise<void>((done) => {
      for (let i = 0; i < n; i++)
        limit.run(async () => {
          order.push(i);
          most = Math.max(most, ++running);
          await null;
          running--;
          if (--left === 0) done();
        });
    });
    await tick(); // the last task's promise settles after its body ran
    expect(order).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(most).toBe(7);
    expect([limit.activeCount, limit.pendingCount]).toEqual([0, 0]);
  });
});
