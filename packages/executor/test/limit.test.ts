// The pool's concurrency bound (limit.ts): never more than `concurrency` at once, first in first out, a
// rejected task frees its slot like a resolved one, and a change of concurrency applies at once.
import { describe, expect, it } from "vitest";
import { Limit } from "../src/limit.ts";

const tick = () => new Promise((r) => setImmediate(r));

/** Tasks that finish when told; records the order they started in and the most running at once. */
function tasks(limit: Limit) {
  const started: number[] = [];
  const finish = new Map<number, { ok: () => void; fail: () => void }>();
  let running = 0;
  let most = 0;
  const add = (i: number) =>
    limit.run(() => {
      started.push(i);
      most = Math.max(most, ++running);
      return new Promise<void>((ok, fail) => finish.set(i, { ok, fail })).finally(() => running--);
    });
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

  it("keeps order and count through a long queue (its array is compacted as it drains)", async () => {
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
