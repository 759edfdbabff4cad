// Prefetch sizing (pool.ts): half a pool until runs and claims are measured, then what a full pool
// finishes during one claim, twice over, never beyond maxLeasesHeld().
import { describe, expect, it } from "vitest";
import { DEFAULT_POOL } from "@fairway/store";
import { Pool, maxLeasesHeld } from "../src/pool.ts";

const pool = (concurrency: number) => new Pool({ ...DEFAULT_POOL, type: "t", concurrency }, async () => {});

describe("pool prefetch", () => {
  it("claims half a pool ahead before anything is measured", () => {
    const p = pool(100);
    expect(p.claimable).toBe(150);
    p.recordRun(5); // a run but no claim yet: still unmeasured
    expect(p.claimable).toBe(150);
  });

  it("keeps half a pool ahead for jobs much slower than a claim", () => {
    const p = pool(100);
    p.recordClaim(10);
    p.recordRun(2_000);
    expect(p.prefetch).toBe(50);
  });

  it("queues what the pool finishes during a claim, twice over, for fast jobs", () => {
    const p = pool(10);
    p.recordClaim(10);
    p.recordRun(20); // 10 slots × 10 ms ÷ 20 ms = 5 finish during a claim → 10 queued
    expect(p.prefetch).toBe(10);
  });

  it("never holds more than maxLeasesHeld, however fast the jobs", () => {
    for (const c of [1, 2, 10, 50, 333, 1000, 5000]) {
      const p = pool(c);
      p.recordClaim(50);
      p.recordRun(0);
      expect(p.claimable).toBe(maxLeasesHeld(c));
      expect(maxLeasesHeld(c)).toBeLessThanOrEqual(c + Math.max(Math.ceil(c / 2), 4 * c));
    }
  });

  it("follows the measurements as they change (moving averages)", () => {
    const p = pool(50);
    p.recordClaim(10);
    p.recordRun(3);
    const fast = p.prefetch;
    for (let i = 0; i < 50; i++) p.recordRun(5_000);
    expect(fast).toBeGreaterThan(50);
    expect(p.prefetch).toBe(25);
  });
});

describe("pool queue", () => {
  const cfg = (concurrency: number) => ({ ...DEFAULT_POOL, type: "t", concurrency });
  const tick = () => new Promise((r) => setImmediate(r));

  it("runs at most `concurrency` at once, in order, and starts the next as one finishes or slots are added", async () => {
    const started: number[] = [];
    const finish = new Map<number, () => void>();
    const p = new Pool<number>(cfg(2), (n) => {
      started.push(n);
      return new Promise<void>((r) => finish.set(n, r));
    });
    for (let i = 0; i < 6; i++) p.run(i);
    expect(started).toEqual([0, 1]);
    expect(p.inFlight).toBe(6);
    finish.get(1)!();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    expect(p.inFlight).toBe(5);
    p.reconfigure(cfg(4));
    expect(started).toEqual([0, 1, 2, 3, 4]);
    for (const n of [0, 2, 3, 4]) finish.get(n)!();
    await tick();
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    finish.get(5)!();
    await tick();
    expect(p.inFlight).toBe(0);
  });

  it("keeps the order through a long queue (its storage is compacted as it drains)", async () => {
    const started: number[] = [];
    let release: (() => void) | null = null;
    const p = new Pool<number>(cfg(1), (n) => {
      started.push(n);
      return new Promise<void>((r) => (release = r));
    });
    for (let i = 0; i < 5000; i++) p.run(i);
    // Add more while it drains, as claims do.
    for (let i = 0; i < 5000; i++) {
      if (i === 2500) for (let j = 5000; j < 6000; j++) p.run(j);
      release!();
      await Promise.resolve();
      await Promise.resolve();
    }
    while (started.length < 6000) {
      release!();
      await tick();
    }
    expect(started).toEqual(Array.from({ length: 6000 }, (_, i) => i));
  });
});
