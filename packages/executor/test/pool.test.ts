// Prefetch sizing (pool.ts): half a pool until runs and claims are measured, then what a full pool
// finishes during one claim, twice over, never beyond maxLeasesHeld().
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
