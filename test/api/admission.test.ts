// Admission (packages/api/src/admission.ts), on its own: shares, the fair order of what waits, prompt
// refusals, and a limit that follows latency. A clock the test moves stands in for time.
import { expect, test } from "vitest";
import { Admission, type Refusal, type Ticket } from "../../packages/api/src/admission.ts";

const isTicket = (r: unknown): r is Ticket => typeof (r as Ticket).release === "function";

test("a tenant alone may use the whole limit; another tenant under its share is let in at once", async () => {
  // maxLimit 6: the adaptive limit tops out at 4, the two slots above it kept for tenants under their share.
  const a = new Admission({ initialLimit: 4, minLimit: 4, maxLimit: 6, maxWaitMs: 10_000 });
  const held = [0, 1, 2, 3].map(() => a.acquire("flood", 1));
  expect(held.every(isTicket)).toBe(true);
  const floodWaits = a.acquire("flood", 1) as Promise<Ticket | Refusal>;
  expect(floodWaits).toBeInstanceOf(Promise);
  // The flooder holds the whole limit; the other tenant's first two requests (its share) run anyway.
  const other = [a.acquire("other", 1), a.acquire("other", 1)];
  expect(other.every(isTicket)).toBe(true);
  // Its third is over its share (2 of 4) and the limit is full: it waits, ahead of the flooder.
  const otherWaits = a.acquire("other", 1) as Promise<Ticket | Refusal>;
  expect(otherWaits).toBeInstanceOf(Promise);
  const order: string[] = [];
  void floodWaits.then(() => order.push("flood"));
  void otherWaits.then(() => order.push("other"));
  // Six run (maxLimit). Releases of the flooder's let in nothing while both tenants hold their share
  // (2 each) and four or more run (the limit).
  (held[0] as Ticket).release();
  (held[1] as Ticket).release();
  await Promise.resolve();
  expect(order).toEqual([]);
  expect(a.snapshot()).toMatchObject({ inFlight: 4, waiting: 2 });
  // The other tenant under its share again: its waiting request goes first, ahead of the flooder's.
  (other[0] as Ticket).release();
  await Promise.resolve();
  expect(order).toEqual(["other"]);
  (held[2] as Ticket).release();
  await Promise.resolve();
  expect(order).toEqual(["other", "flood"]);
  expect(a.snapshot().tenants.find((t) => t.tenant === "other")).toMatchObject({ admitted: 3, queued: 1, refused: 0 });
});

test("tenants under their share run at once up to maxLimit, and never past it", () => {
  const a = new Admission({ initialLimit: 4, minLimit: 4, maxLimit: 6, maxWaitMs: 10_000 });
  for (let i = 0; i < 4; i++) expect(isTicket(a.acquire("flood", 1))).toBe(true);
  expect(isTicket(a.acquire("b", 1))).toBe(true);
  expect(isTicket(a.acquire("c", 1))).toBe(true);
  // Three tenants: each share is 2 (the least), and c is under it, but six run: c waits.
  expect(a.acquire("c", 1)).toBeInstanceOf(Promise);
  expect(a.acquire("d", 1)).toBeInstanceOf(Promise);
  expect(a.snapshot()).toMatchObject({ limit: 4, inFlight: 6, waiting: 2 });
});

test("past four shares of waiting places a tenant is refused at once, and a wait has a bound", async () => {
  const a = new Admission({ initialLimit: 4, minLimit: 4, maxLimit: 4, maxWaitMs: 30 });
  for (let i = 0; i < 4; i++) expect(isTicket(a.acquire("flood", 1))).toBe(true);
  const waiting = Array.from({ length: 16 }, () => a.acquire("flood", 1));
  expect(waiting.every((w) => w instanceof Promise)).toBe(true);
  const refused = a.acquire("flood", 1);
  expect(refused).toEqual({ retryAfterSec: 1, reason: "queue_full" });
  for (const w of waiting) expect(await w).toEqual({ retryAfterSec: 1, reason: "waited_too_long" });
  expect(a.snapshot()).toMatchObject({ inFlight: 4, waiting: 0 });
  expect(a.snapshot().tenants[0]).toMatchObject({ tenant: "flood", admitted: 4, queued: 16, refused: 17 });
});

test("weights divide the limit: a tenant of weight 3 runs about three times the requests of one of weight 1", async () => {
  const a = new Admission({ initialLimit: 8, minLimit: 8, maxLimit: 8, maxWaitMs: 10_000 });
  // Both tenants keep as many waiting as they may; slots are handed out as they free, oldest first.
  const running: Array<{ t: string; ticket: Ticket }> = [];
  const weights: Record<string, number> = { light: 1, heavy: 3 };
  const topUp = async () => {
    for (const t of ["light", "heavy"]) {
      for (;;) {
        const r = a.acquire(t, weights[t]);
        if (isTicket(r)) running.push({ t, ticket: r });
        else if (r instanceof Promise) void r.then((x) => isTicket(x) && running.push({ t, ticket: x }));
        else break;
      }
    }
    await Promise.resolve();
  };
  await topUp();
  const got: Record<string, number> = { light: 0, heavy: 0 };
  for (let round = 0; round < 400; round++) {
    const done = running.shift()!;
    if (round >= 100) got[done.t]++;
    done.ticket.release();
    await topUp();
  }
  const ratio = got.heavy / got.light;
  expect(ratio).toBeGreaterThan(2.5);
  expect(ratio).toBeLessThan(3.5);
});

test("the limit shrinks while latency grows over its baseline, and grows back while it does not", () => {
  let now = 0;
  const a = new Admission({ initialLimit: 32, minLimit: 4, maxLimit: 64, now: () => now });
  const batch = (ms: number) => {
    const tickets: Ticket[] = [];
    for (let i = 0; i < a.limit; i++) {
      const r = a.acquire("one", 1);
      if (isTicket(r)) tickets.push(r);
    }
    now += ms;
    for (const t of tickets) t.release();
  };
  for (let i = 0; i < 50; i++) batch(10);
  const steady = a.limit;
  expect(steady).toBeGreaterThanOrEqual(32);
  for (let i = 0; i < 50; i++) batch(100);
  const slow = a.limit;
  expect(slow).toBeLessThan(steady / 2);
  for (let i = 0; i < 200; i++) batch(10);
  expect(a.limit).toBeGreaterThan(slow);
});
