import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { allocate, chargeFor, correctionFor, effectiveVtime, ewma, type FairTenant } from "../src/fairshare.ts";

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

const tenantsArb = fc.uniqueArray(
  fc.record({
    id: fc.string({ minLength: 1, maxLength: 4 }),
    weight: fc.integer({ min: 1, max: 20 }),
    vtime: fc.integer({ min: 0, max: 10_000 }),
    costMs: fc.integer({ min: 1, max: 1000 }),
    room: fc.integer({ min: 0, max: 50 }),
  }),
  { selector: (t) => t.id, minLength: 1, maxLength: 12 },
);

/** Seeded PRNG (mulberry32) so the simulations are reproducible. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("allocate properties", () => {
  test("Σ = min(budget, Σ room) (work-conserving), each ≤ room", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), tenantsArb, (budget, ts) => {
        const a = allocate(budget, ts);
        const totalRoom = ts.reduce((s, t) => s + t.room, 0);
        expect(sum(a)).toBeLessThanOrEqual(budget);
        expect(sum(a)).toBe(Math.min(budget, totalRoom));
        for (const t of ts) {
          expect(a.get(t.id)).toBeGreaterThanOrEqual(0);
          expect(a.get(t.id)).toBeLessThanOrEqual(t.room);
        }
      }),
    );
  });

  test("monotone in budget", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), tenantsArb, (budget, ts) => {
        const a = allocate(budget, ts);
        const b = allocate(budget + 1, ts);
        for (const t of ts) expect(b.get(t.id)).toBeGreaterThanOrEqual(a.get(t.id) as number);
      }),
    );
  });

  test("SFQ bound: no tenant is ahead of an unsatisfied one by more than one of its own slots", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), tenantsArb, (budget, ts) => {
        const a = allocate(budget, ts);
        for (const i of ts) {
          const ni = a.get(i.id) as number;
          if (ni === 0) continue;
          for (const j of ts) {
            const nj = a.get(j.id) as number;
            if (nj >= j.room) continue; // j is limited by its room, not by fairness
            // i's last taken slot started no later than j's first untaken one.
            expect(i.vtime + ((ni - 1) * i.costMs) / i.weight).toBeLessThanOrEqual(
              j.vtime + (nj * j.costMs) / j.weight + 1e-9,
            );
          }
        }
      }),
    );
  });

  test("equal vtime and cost, unlimited room: shares ∝ weight within one slot", () => {
    // Start-time tags give every tenant its first slot at vtime, so in ONE round a heavier-than-average
    // tenant can trail its ideal share by up to n·w/W slots (e.g. budget 3, weights 10,10,10,16: the
    // 16 gets 0 of an ideal 1.04), and no tenant exceeds its ideal by more than 1. With equal weights
    // that is exactly ±1. vtime carries the difference into the next round (simulations below).
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3000 }),
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 10 }),
        (budget, weights) => {
          const ts: FairTenant[] = weights.map((w, i) => ({
            id: `t${i}`,
            weight: w,
            vtime: 0,
            costMs: 100,
            room: 1_000_000,
          }));
          const a = allocate(budget, ts);
          const W = weights.reduce((s, w) => s + w, 0);
          for (const t of ts) {
            const err = (a.get(t.id) as number) - (budget * t.weight) / W;
            expect(err).toBeLessThanOrEqual(1 + 1e-9);
            expect(err).toBeGreaterThanOrEqual(-(ts.length * t.weight) / W - 1e-9);
          }
        },
      ),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 9 }),
        (budget, n, w) => {
          const ts: FairTenant[] = Array.from({ length: n }, (_, i) => ({
            id: `t${i}`,
            weight: w,
            vtime: 0,
            costMs: 7,
            room: 1_000_000,
          }));
          const a = allocate(budget, ts);
          for (const t of ts) expect(Math.abs((a.get(t.id) as number) - budget / n)).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  test("no starvation: every backlogged tenant is served within a bounded number of rounds", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ weight: fc.integer({ min: 1, max: 10 }), costMs: fc.integer({ min: 1, max: 100 }) }), {
          minLength: 2,
          maxLength: 8,
        }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer(),
        (specs, budget, seed) => {
          const rand = rng(seed);
          const ts = specs.map((s, i) => ({ id: `t${i}`, ...s, vtime: 0, room: 1 }));
          const slot = (t: { costMs: number; weight: number }) => t.costMs / t.weight;
          // When i starts waiting, others can only take slots starting no later than i's next slot;
          // that count, over the (fully used) budget, bounds the rounds i can wait.
          const deadline = ts.map(() => Number.POSITIVE_INFINITY);
          for (let round = 0; round < 200; round++) {
            for (const t of ts) t.room = 1 + Math.floor(rand() * 5); // always backlogged
            ts.forEach((t, i) => {
              if (deadline[i] !== Number.POSITIVE_INFINITY) return;
              const ahead = ts.reduce(
                (s, j) => (j === t ? s : s + Math.floor(Math.max(0, t.vtime - j.vtime) / slot(j) + 1e-6) + 1),
                0,
              );
              deadline[i] = round + Math.floor(ahead / budget);
            });
            const a = allocate(budget, ts);
            ts.forEach((t, i) => {
              const n = a.get(t.id) as number;
              t.vtime += chargeFor(n, t.costMs, t.weight);
              if (n > 0) deadline[i] = Number.POSITIVE_INFINITY;
              else expect(round).toBeLessThan(deadline[i]);
            });
          }
        },
      ),
    );
  });
});

describe("allocate examples", () => {
  test("ties: tenant id, then k", () => {
    const ts = ["b", "a", "c"].map((id) => ({ id, weight: 1, vtime: 0, costMs: 1, room: 5 }));
    expect([...allocate(1, ts)]).toEqual([
      ["b", 0],
      ["a", 1],
      ["c", 0],
    ]);
    expect(allocate(4, ts).get("a")).toBe(2);
  });
  test("lower vtime goes first; zero room gets nothing; budget 0 gives nothing", () => {
    const ts = [
      { id: "a", weight: 1, vtime: 100, costMs: 10, room: 10 },
      { id: "b", weight: 1, vtime: 0, costMs: 10, room: 10 },
      { id: "c", weight: 1, vtime: 0, costMs: 10, room: 0 },
    ];
    expect(Object.fromEntries(allocate(10, ts))).toEqual({ a: 0, b: 10, c: 0 });
    expect(Object.fromEntries(allocate(15, ts))).toEqual({ a: 5, b: 10, c: 0 });
    expect(sum(allocate(0, ts))).toBe(0);
  });
  test("large budget with many tenants is fast (heap, not budget×n slots)", () => {
    const ts = Array.from({ length: 2000 }, (_, i) => ({
      id: `t${i}`,
      weight: 1 + (i % 7),
      vtime: i % 13,
      costMs: 50 + (i % 5),
      room: 100,
    }));
    const t0 = performance.now();
    const a = allocate(10_000, ts);
    expect(sum(a)).toBe(10_000);
    expect(performance.now() - t0).toBeLessThan(1000); // generous: a correctness guard, not a benchmark
  });
  test("rejects non-positive weight or cost (a bug upstream)", () => {
    expect(() => allocate(1, [{ id: "a", weight: 0, vtime: 0, costMs: 1, room: 1 }])).toThrow(RangeError);
  });
});

describe("seeded 1000-round simulations", () => {
  const weights = { A: 1, B: 2, C: 5 } as const;
  const W = 8;

  test("weights 1:2:5 → count shares within 2%", () => {
    const rand = rng(7);
    const ts = Object.entries(weights).map(([id, weight]) => ({ id, weight, vtime: 0, costMs: 100, room: 0 }));
    const got: Record<string, number> = { A: 0, B: 0, C: 0 };
    for (let round = 0; round < 1000; round++) {
      for (const t of ts) t.room = 20; // always backlogged
      const budget = 1 + Math.floor(rand() * 10);
      const a = allocate(budget, ts);
      for (const t of ts) {
        const n = a.get(t.id) as number;
        got[t.id] += n;
        t.vtime += chargeFor(n, t.costMs, t.weight);
      }
    }
    const total = got.A + got.B + got.C;
    for (const [id, w] of Object.entries(weights)) expect(Math.abs(got[id] / total - w / W)).toBeLessThan(0.02);
  });

  test("C's jobs cost 10×: its share of worker time still matches its weight (charge by cost, correct on settle)", () => {
    const rand = rng(11);
    const trueCost: Record<string, number> = { A: 100, B: 100, C: 1000 };
    // Start from a wrong estimate; ewma + correction must converge to the real cost.
    const ts = Object.entries(weights).map(([id, weight]) => ({ id, weight, vtime: 0, costMs: 100, room: 0 }));
    const workerMs: Record<string, number> = { A: 0, B: 0, C: 0 };
    for (let round = 0; round < 1000; round++) {
      for (const t of ts) t.room = 20;
      const a = allocate(4, ts);
      for (const t of ts) {
        const n = a.get(t.id) as number;
        const estimate = t.costMs;
        t.vtime += chargeFor(n, estimate, t.weight);
        for (let k = 0; k < n; k++) {
          const actual = trueCost[t.id] * (0.5 + rand()); // noisy durations, mean = true cost
          workerMs[t.id] += actual;
          t.vtime += correctionFor(actual, estimate, t.weight);
          t.costMs = ewma(t.costMs, actual);
        }
      }
    }
    const total = workerMs.A + workerMs.B + workerMs.C;
    for (const [id, w] of Object.entries(weights)) expect(Math.abs(workerMs[id] / total - w / W)).toBeLessThan(0.02);
  });
});

describe("accounting helpers", () => {
  test("chargeFor / correctionFor / ewma / effectiveVtime", () => {
    expect(chargeFor(3, 100, 2)).toBe(150);
    expect(correctionFor(250, 100, 5)).toBe(30);
    expect(correctionFor(50, 100, 5)).toBe(-10);
    expect(ewma(100, 200)).toBeCloseTo(120);
    expect(ewma(100, 200, 0.5)).toBe(150);
    expect(effectiveVtime(10, 500)).toBe(500); // back from idle: no banked credit
    expect(effectiveVtime(900, 500)).toBe(900);
  });
});
