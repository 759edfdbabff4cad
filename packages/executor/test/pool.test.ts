// Prefetch sizing (pool.ts): half a pool until runs and claims are measured, then what a full pool
// finishes during one claim, twice over, or in QUEUE_MS if that is more, never beyond maxLeasesHeld().
import { describe, expect, it } from "vitest";
import { DEFAULT_POOL } from "@fairway/store";
import { Pool, QUEUE_MS, maxLeasesHeld } from "../src/pool.ts";

const pool = (concurrency: number) => new Pool({ ...DEFAULT_POOL, type: "t", concurrency });

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

  it("queues what the pool finishes during a claim, twice over, when claims are slow", () => {
    const p = pool(10);
    p.recordClaim(80);
    p.recordRun(20); // 10 slots × 80 ms ÷ 20 ms = 40 finish during a claim → 80 queued (50 in QUEUE_MS)
    expect(p.prefetch).toBe(80);
  });

  it("queues at least what the pool finishes in QUEUE_MS, so claims are not tiny", () => {
    expect(QUEUE_MS).toBe(100);
    const p = pool(50);
    p.recordClaim(5);
    p.recordRun(10); // 25 finish during a claim; 500 in QUEUE_MS
    expect(p.prefetch).toBe(500);
    const slow = pool(50);
    slow.recordClaim(5);
    slow.recordRun(150); // 50 × 5 ÷ 150 → 2; 50 × 100 ÷ 150 → 34
    expect(slow.prefetch).toBe(34);
  });

  it("never holds more than maxLeasesHeld, however fast the jobs", () => {
    for (const c of [1, 2, 10, 50, 333, 1000, 5000]) {
      const p = pool(c);
      p.recordClaim(50);
      p.recordRun(0);
      expect(p.claimable).toBe(maxLeasesHeld(c));
      expect(maxLeasesHeld(c)).toBeLessThanOrEqual(c + Math.max(Math.ceil(c / 2), Math.min(32 * c, 3000)));
    }
  });

  it("queues QUEUE_MS of fast webhook deliveries, not a smaller cap (a 50-slot pool of 3 ms runs)", () => {
    const p = pool(50);
    p.recordClaim(20);
    p.recordRun(3); // 2 × 50 × 20 ÷ 3 → 667; 50 × 100 ÷ 3 → 1667; capped at 32 pools
    expect(p.prefetch).toBe(1600);
    expect(maxLeasesHeld(50)).toBe(1650);
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

describe("when a pool claims", () => {
  const tick = () => new Promise((r) => setImmediate(r));

  it("claims at once while a slot is idle, then only once half the queue has drained", async () => {
    const p = pool(10); // prefetch 5 until measured
    expect(p.wantsClaim).toBe(true);
    const release: Array<() => void> = [];
    for (let i = 0; i < 15; i++) p.run(() => new Promise<void>((r) => release.push(r)));
    await tick();
    expect([p.inFlight, p.claimable, p.wantsClaim]).toEqual([15, 0, false]);
    release.shift()!(); // one run ends, a queued one starts: 1 free, 4 still queued
    await tick();
    expect([p.claimable, p.wantsClaim]).toEqual([1, false]);
    release.shift()!();
    release.shift()!(); // 3 free of a 5-deep queue: half of it has drained
    await tick();
    expect([p.claimable, p.wantsClaim]).toEqual([3, true]);
    while (release.length) release.shift()!();
    await tick();
    while (release.length) release.shift()!();
    await tick();
    expect([p.inFlight, p.wantsClaim]).toEqual([0, true]);
  });

  it("always claims for a one-slot pool with a free slot", () => {
    const p = pool(1);
    p.recordClaim(10);
    p.recordRun(1_000);
    expect([p.prefetch, p.claimable, p.wantsClaim]).toEqual([1, 2, true]);
  });
});
