// Prefetch sizing (pool.ts): half a pool until runs and claims are measured, then what a full pool
// finishes during one claim, three times over, never beyond maxLeasesHeld(); and when to claim again.
import { describe, expect, it } from "vitest";
import { DEFAULT_POOL } from "@fairway/store";
import { Pool, maxLeasesHeld } from "../src/pool.ts";

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

  it("queues what the pool finishes during a claim, three times over, for fast jobs", () => {
    const p = pool(10);
    p.recordClaim(10);
    p.recordRun(20); // 10 slots × 10 ms ÷ 20 ms = 5 finish during a claim → 15 queued
    expect(p.prefetch).toBe(15);
  });

  it("never holds more than maxLeasesHeld, however fast the jobs", () => {
    for (const c of [1, 2, 10, 50, 333, 1000, 5000]) {
      const p = pool(c);
      p.recordClaim(50);
      p.recordRun(0);
      expect(p.claimable).toBe(maxLeasesHeld(c));
      expect(maxLeasesHeld(c)).toBeLessThanOrEqual(c + Math.max(Math.ceil(c / 2), Math.min(16 * c, 3000)));
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

describe("when to claim", () => {
  const never = () => new Promise<void>(() => {});
  /** A 10-slot pool of fast jobs: prefetch 15, so up to 25 held. */
  const fast = () => {
    const p = pool(10);
    p.recordClaim(10);
    p.recordRun(20);
    return p;
  };

  it("waits while more than half the prefetch queue is still there", () => {
    const p = fast();
    for (let i = 0; i < 25; i++) void p.run(never); // 10 running, 15 queued
    expect(p.claimable).toBe(0);
    expect(p.wantsClaim).toBe(false);
  });

  it("claims once half the queue is gone, and never holds back while a slot is free", () => {
    const held = fast();
    for (let i = 0; i < 18; i++) void held.run(never); // 8 queued: 7 claimable, under half of 15
    expect(held.claimable).toBe(7);
    expect(held.wantsClaim).toBe(false);
    const half = fast();
    for (let i = 0; i < 17; i++) void half.run(never); // 7 queued: 8 claimable
    expect(half.wantsClaim).toBe(true);
    const idle = fast();
    for (let i = 0; i < 9; i++) void idle.run(never); // a slot free, nothing queued
    expect(idle.wantsClaim).toBe(true);
    expect(idle.claimable).toBe(16);
  });

  it("claims for a single free slot when the queue is capped and would not outlast a claim", () => {
    const p = pool(200);
    p.recordClaim(40);
    p.recordRun(0); // no-op handlers: Little's law wants far more than maxPrefetch allows
    expect(p.prefetch).toBe(maxLeasesHeld(200) - 200);
    for (let i = 0; i < maxLeasesHeld(200) - 1; i++) void p.run(never);
    expect(p.claimable).toBe(1);
    expect(p.wantsClaim).toBe(true);
  });

  it("claims for a single free slot of a one-slot pool", () => {
    const p = pool(1);
    expect(p.wantsClaim).toBe(true);
    void p.run(never);
    void p.run(never);
    expect(p.wantsClaim).toBe(false); // one running, one queued: the whole prefetch of 1
  });
});
