// The claims a settle makes in its transaction (claimer.ts, handOff): as many as it freed, within the
// pool's room, except that a keyed trigger's freed slot is claimed even with the pool's queue full (no
// standby trigger of its key took it). No database: the budget arithmetic only; the kill -9 drills
// (test/faults/kill9-keys, kill9-handoff) run the same path end to end.
import { afterEach, expect, it } from "vitest";
import { DEFAULT_POOL } from "@fairway/store";
import { Claimer, type ClaimerDeps } from "../src/claimer.ts";
import { Pool } from "../src/pool.ts";

const ends: Array<() => void> = [];
afterEach(() => {
  for (const end of ends.splice(0)) end();
});

function setup(full: boolean) {
  const pool = new Pool({ ...DEFAULT_POOL, type: "work", concurrency: 2, leaseMs: 30_000 });
  // Runs that end only after the test: the pool's slots and queue stay taken.
  while (full && pool.claimable > 0) pool.run(() => new Promise<void>((r) => ends.push(r)), 0);
  const claimer = new Claimer({ pools: new Map([["work", pool]]), owner: "exe_1" } as unknown as ClaimerDeps);
  return { pool, claimer };
}

it("claims what a settle freed within the pool's room; a full pool claims only freed key slots", () => {
  const open = setup(false);
  expect(open.pool.claimable).toBeGreaterThanOrEqual(3);
  const freed = [
    { type: "work", tenantId: "a" },
    { type: "work", tenantId: "b", key: "k1" },
    { type: "work", tenantId: "b", key: "k2" },
  ];
  expect(open.claimer.handOff(freed)).toEqual([
    expect.objectContaining({ type: "work", budget: 3, candidates: ["a", "b"] }),
  ]);

  const full = setup(true);
  expect(full.pool.claimable).toBe(0);
  expect(full.claimer.handOff([{ type: "work", tenantId: "a" }])).toEqual([]);
  expect(full.claimer.handOff(freed)).toEqual([
    expect.objectContaining({ type: "work", budget: 2, candidates: ["a", "b"] }),
  ]);
  // A pool this executor does not have claims nothing, keyed or not.
  expect(full.claimer.handOff([{ type: "other", tenantId: "b", key: "k1" }])).toEqual([]);
});
