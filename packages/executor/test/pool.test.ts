// Prefetch sizing (pool.ts): half a pool until runs and claims are measured, then what a full pool
// finishes during one claim, twice over, or in QUEUE_MS if that is more, never beyond maxLeasesHeld().
import { describe, expect, it } from "vitest";
import { DEFAULT_POOL } from "@fairway/store";
import { Pool, QUEUE_MS, maxLeasesHeld, startKey } from "../src/pool.ts";

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

describe("the order a pool starts what it has queued", () => {
  const tick = () => new Promise((r) => setImmediate(r));

  /** A pool of one slot whose runs end when told; records which started, in order. */
  function gated() {
    const p = pool(1);
    const started: string[] = [];
    const ends: Array<() => void> = [];
    // As the executor dispatches a claim: each trigger keyed by startKey() against the slot in service.
    const add = (name: string, slot: { vt: number; vclock: number | null }) =>
      p.run(
        () => {
          started.push(name);
          return new Promise<void>((r) => ends.push(r));
        },
        startKey(slot.vt, slot.vclock, p.lastStarted),
      );
    const next = async () => {
      ends.shift()!();
      await tick();
    };
    return { add, next, started };
  }

  it("starts queued triggers by their WFQ slots, not in the order they were claimed", async () => {
    const g = gated();
    // One claim gave a slots 10 and 12, a later one b (served less) slot 11.
    g.add("a10", { vt: 10, vclock: null });
    g.add("a12", { vt: 12, vclock: null });
    g.add("b11", { vt: 11, vclock: null });
    for (let i = 0; i < 2; i++) await g.next();
    expect(g.started).toEqual(["a10", "b11", "a12"]);
  });

  it("starts a tenant back from idle among what is starting now, not behind the queue", async () => {
    const g = gated();
    // A busy tenant's claims queued slots 100…109; the pool has started 100. The pool clock, where the
    // claims have got to, is 110: a tenant back from idle is given slots 110, 111 there.
    for (let vt = 100; vt < 110; vt++) g.add(`busy${vt}`, { vt, vclock: null });
    expect(startKey(110, 110, 100)).toBe(100);
    expect(startKey(111, 110, 100)).toBe(101);
    g.add("idle0", { vt: 110, vclock: 110 });
    g.add("idle1", { vt: 111, vclock: 110 });
    for (let i = 0; i < 4; i++) await g.next();
    // Next, then interleaved with the busy tenant from the slot in service (ties go to what was queued
    // first); without the move it would have waited for busy101…109.
    expect(g.started).toEqual(["busy100", "idle0", "busy101", "idle1", "busy102"]);
  });

  it("moves no slot forward: a tenant with virtual time of its own, or nothing started yet, keeps its slots", () => {
    expect(startKey(115, null, 100)).toBe(115); // served recently: its slots are its own
    expect(startKey(110, 110, null)).toBe(110); // the pool has started nothing to measure against
    expect(startKey(90, 90, 100)).toBe(90); // the clock is behind what started (another executor's claims)
  });
});
