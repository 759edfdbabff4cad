// The standby slots' bookkeeping (standby-slots.ts), against a fake executor: what each at-cap tenant
// asks to hold, what is kept or given back, and which trigger takes a finished run's slot. No process,
// no database, no clock (the bookkeeping reads none); the kill -9 drills (test/faults/kill9-standby,
// kill9-handoff) cover the same paths end to end.
import { describe, expect, it } from "vitest";
import { silentLogger } from "@fairway/core";
import { DEFAULT_POOL, layoutNamed, type ClaimedTrigger, type LayoutName, type StandbyInput } from "@fairway/store";
import { Pool } from "../src/pool.ts";
import { StandbySlots, type Held } from "../src/standby-slots.ts";

let seq = 0;
const trigger = (tenantId: string, type = "work"): ClaimedTrigger =>
  ({
    id: `trg_${++seq}`,
    tenantId,
    type,
    leaseToken: `l${seq}`,
    attempt: 1,
    atCap: false,
    vt: 0,
    vclock: null,
  }) as ClaimedTrigger;

/** An answer to no ask (the ask's own bookkeeping is tested on its own below). */
const NONE: StandbyInput = { type: "work", owner: "exe_1", leaseMs: 30_000, want: [] };

function setup(opts: { claim?: (input: StandbyInput) => Promise<ClaimedTrigger[]>; layout?: LayoutName } = {}) {
  const pools = new Map([["work", new Pool({ ...DEFAULT_POOL, type: "work", concurrency: 10, leaseMs: 30_000 })]]);
  const held = new Map<string, Held>();
  const released: string[] = [];
  const claims: StandbyInput[] = [];
  const warnings: string[] = [];
  const slots = new StandbySlots({
    owner: "exe_1",
    log: { ...silentLogger, warn: (msg: string) => void warnings.push(msg) },
    pool: (type) => pools.get(type),
    claim: async (input) => {
      claims.push(input);
      return opts.claim ? opts.claim(input) : [];
    },
    split: (input) => layoutNamed(opts.layout ?? "single").standby(input),
    hold: (h) => void held.set(h.t.id, h),
    release: (list) => {
      for (const h of list) {
        held.delete(h.t.id);
        released.push(h.t.id);
      }
    },
  });
  return { slots, held, released, claims, warnings };
}

describe("standby slots", () => {
  it("asks for one per counted trigger here, plus the slots a settle freed, less those already held", () => {
    const { slots } = setup();
    const a1 = trigger("a");
    slots.count(a1);
    slots.count(trigger("a"));
    slots.count(trigger("b"));
    // a: 2 counted + 1 freed; b: 1 counted; c: nothing here (asks for none); a pool not here: none.
    const freed = [{ type: "work", tenantId: "a" }];
    const atCap = [
      { type: "work", tenantId: "a" },
      { type: "work", tenantId: "a" },
      { type: "work", tenantId: "b" },
      { type: "work", tenantId: "c" },
      { type: "other", tenantId: "a" },
    ];
    const [ask] = slots.wanted(freed, atCap);
    expect([ask]).toEqual([
      {
        type: "work",
        owner: "exe_1",
        leaseMs: 30_000,
        want: [
          { tenantId: "a", n: 3 },
          { tenantId: "b", n: 1 },
        ],
      },
    ]);
    const [asked] = slots.wanted(freed, atCap);
    expect(asked).toBeUndefined(); // asked for already, not yet answered
    slots.answered(ask, [trigger("a"), trigger("a")]);
    expect(slots.wanted([], [{ type: "work", tenantId: "a" }])).toEqual([]); // 2 counted, 2 held
    expect(slots.wanted(freed, [{ type: "work", tenantId: "a" }])[0].want).toEqual([{ tenantId: "a", n: 1 }]);
  });

  it("holds no more per tenant than its counted triggers here, and none for a tenant with no run here", () => {
    const { slots, held, released } = setup();
    slots.count(trigger("a"));
    slots.count(trigger("a"));
    const got = [trigger("a"), trigger("a"), trigger("a"), trigger("b"), trigger("a", "other")];
    slots.answered(NONE, got);
    expect([...held.keys()]).toEqual([got[0].id, got[1].id]);
    expect(released).toEqual([got[2].id, got[3].id, got[4].id]);
    expect([...held.values()].every((h) => h.standby && !h.started)).toBe(true);
    // Full: the tenant asks for no more.
    expect(slots.wanted([], [{ type: "work", tenantId: "a" }])).toEqual([]);
  });

  it("hands a finished run's slot to the tenant's standby triggers in the order they were held", () => {
    const { slots } = setup();
    const run = trigger("a");
    slots.count(run);
    slots.count(trigger("a"));
    const [s1, s2] = [trigger("a"), trigger("a")];
    slots.answered(NONE, [s1, s2]);
    const next = slots.takeOver(run);
    expect(next?.t.id).toBe(s1.id);
    expect(next?.standby).toBe(false);
    expect(next?.t.atCap).toBe(true); // counted against the cap from the settle on, in place of `run`
    expect(slots.takeOver(run)?.t.id).toBe(s2.id);
    expect(slots.takeOver(run)).toBeUndefined();
    expect(slots.takeOver(trigger("b"))).toBeUndefined();
  });

  it("releases what a tenant holds on standby when its last run here ends without handing over", () => {
    const { slots, held, released } = setup();
    const [r1, r2] = [trigger("a"), trigger("a")];
    slots.count(r1);
    slots.count(r2);
    const s = trigger("a");
    slots.answered(NONE, [s]);
    slots.uncount(r1, false);
    expect(released).toEqual([]); // r2 still runs here: s may take its slot
    slots.uncount(r2, false);
    expect(released).toEqual([s.id]);
    expect(held.size).toBe(0);
  });

  it("keeps the standby of a run that handed over, and everything while stopping (stop() releases it)", () => {
    const { slots, released } = setup();
    const r = trigger("a");
    slots.count(r);
    slots.answered(NONE, [trigger("a")]);
    const next = slots.takeOver(r)!;
    slots.count(next.t); // the executor runs it: counted before the old run's task returns
    slots.uncount(r, true);
    expect(released).toEqual([]);
    slots.answered(NONE, [trigger("a")]);
    slots.uncount(next.t, false, true);
    expect(released).toEqual([]);
  });

  it("forgets a standby trigger whose lease was lost", () => {
    const { slots, held } = setup();
    const r = trigger("a");
    slots.count(r);
    slots.count(trigger("a"));
    const [s1, s2] = [trigger("a"), trigger("a")];
    slots.answered(NONE, [s1, s2]);
    slots.drop(held.get(s2.id)!);
    expect(slots.wanted([], [{ type: "work", tenantId: "a" }])[0].want).toEqual([{ tenantId: "a", n: 1 }]);
    expect(slots.takeOver(r)?.t.id).toBe(s1.id);
    expect(slots.takeOver(r)).toBeUndefined();
  });

  it("claims on standby after a claim reached a cap, holds what it got, and idle() waits for it", async () => {
    let answer: (ts: ClaimedTrigger[]) => void = () => {};
    const { slots, held, claims } = setup({ claim: () => new Promise((r) => (answer = r)) });
    slots.count(trigger("a"));
    slots.afterClaim("work", [{ tenantId: "a" }]);
    expect(claims).toEqual([{ type: "work", owner: "exe_1", leaseMs: 30_000, want: [{ tenantId: "a", n: 1 }] }]);
    let idle = false;
    const waiting = slots.idle().then(() => (idle = true));
    await Promise.resolve();
    expect(idle).toBe(false);
    const s = trigger("a");
    answer([s]);
    await waiting;
    expect([...held.keys()]).toEqual([s.id]);
  });

  it("on a Citus cluster claims on standby per tenant, each naming its tenant", () => {
    const { slots, claims } = setup({ layout: "per-tenant" });
    slots.count(trigger("a"));
    slots.count(trigger("b"));
    slots.count(trigger("b"));
    slots.afterClaim("work", [{ tenantId: "a" }, { tenantId: "b" }]);
    expect(claims).toEqual([
      { type: "work", owner: "exe_1", leaseMs: 30_000, want: [{ tenantId: "a", n: 1 }], tenantId: "a" },
      { type: "work", owner: "exe_1", leaseMs: 30_000, want: [{ tenantId: "b", n: 2 }], tenantId: "b" },
    ]);
  });

  it("logs a failed standby claim and holds nothing", async () => {
    const { slots, held, warnings } = setup({ claim: () => Promise.reject(new Error("connection lost")) });
    slots.count(trigger("a"));
    slots.afterClaim("work", [{ tenantId: "a" }]);
    await slots.idle();
    expect(held.size).toBe(0);
    expect(warnings).toEqual(["standby claim failed"]);
  });

  it("never asks twice for the same slots: an ask counts as held until its answer", async () => {
    let answer: (ts: ClaimedTrigger[]) => void = () => {};
    const { slots, claims } = setup({ claim: () => new Promise((r) => (answer = r)) });
    for (let i = 0; i < 5; i++) slots.count(trigger("a"));
    // A claim took the tenant to its cap and asks for 5; a settle's hand-off then asks before that answer.
    slots.afterClaim("work", [{ tenantId: "a" }]);
    expect(claims.map((c) => c.want)).toEqual([[{ tenantId: "a", n: 5 }]]);
    expect(slots.wanted([], [{ type: "work", tenantId: "a" }])).toEqual([]);
    // It got 3 of the 5: the next ask is for the other 2.
    answer([trigger("a"), trigger("a"), trigger("a")]);
    await slots.idle();
    const [next] = slots.wanted([], [{ type: "work", tenantId: "a" }]);
    expect(next.want).toEqual([{ tenantId: "a", n: 2 }]);
    // A settle whose hand-off failed answers its ask with nothing: the slots are asked for again.
    slots.answered(next, []);
    expect(slots.wanted([], [{ type: "work", tenantId: "a" }])[0].want).toEqual([{ tenantId: "a", n: 2 }]);
  });

  it("a failed standby claim is asked for again", async () => {
    const { slots } = setup({ claim: () => Promise.reject(new Error("connection lost")) });
    slots.count(trigger("a"));
    slots.afterClaim("work", [{ tenantId: "a" }]);
    await slots.idle();
    expect(slots.wanted([], [{ type: "work", tenantId: "a" }])[0].want).toEqual([{ tenantId: "a", n: 1 }]);
  });

  it("holds a keyed trigger per key: it asks by key, and takes over only from a run of its own key", async () => {
    const { slots, held, released, claims } = setup();
    const keyed = (key: string) => ({ ...trigger("a"), key });
    const x1 = keyed("x");
    const y1 = keyed("y");
    slots.count(x1);
    slots.count(y1);
    slots.afterClaim("work", [{ tenantId: "a", key: "x" }]);
    await slots.idle();
    expect(claims).toEqual([
      { type: "work", owner: "exe_1", leaseMs: 30_000, want: [{ tenantId: "a", n: 1, key: "x" }] },
    ]);
    // One x on standby (one x counted here); a second x past the count is given back.
    const x2 = keyed("x");
    const x3 = keyed("x");
    slots.answered(NONE, [x2, x3]);
    expect([...held.keys()]).toEqual([x2.id]);
    expect(released).toEqual([x3.id]);
    // y's run ending takes nothing of x's; x's run ending takes x2.
    expect(slots.takeOver(y1)).toBeUndefined();
    slots.uncount(y1, false);
    expect(slots.takeOver(x1)?.t.id).toBe(x2.id);
    // The key's settle asks for its key: counted + freed − held − asked.
    const ask = slots.wanted([], [{ type: "work", tenantId: "a", key: "x" }]);
    expect(ask).toEqual([{ type: "work", owner: "exe_1", leaseMs: 30_000, want: [{ tenantId: "a", n: 1, key: "x" }] }]);
    expect(slots.wanted([], [{ type: "work", tenantId: "a", key: "x" }])).toEqual([]);
    slots.answered(ask[0], []);
    expect(slots.wanted([], [{ type: "work", tenantId: "a", key: "x" }])[0].want).toEqual([
      { tenantId: "a", n: 1, key: "x" },
    ]);
  });

  it("gives a key's standby triggers back when its last run here ends without a hand-over", () => {
    const { slots, held, released } = setup();
    const x1 = { ...trigger("a"), key: "x" };
    const other = trigger("a");
    slots.count(x1);
    slots.count(other);
    const x2 = { ...trigger("a"), key: "x" };
    slots.answered(NONE, [x2]);
    expect([...held.keys()]).toEqual([x2.id]);
    // The tenant still has a run here, the key none: the key's standby goes back.
    slots.uncount(x1, false);
    expect(released).toEqual([x2.id]);
    expect(slots.takeOver(other)).toBeUndefined();
  });
});
