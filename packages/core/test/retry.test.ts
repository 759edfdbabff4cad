import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { backoffDelay, decideRetry, parseRetryAfter } from "../src/retry.ts";
import { DEFAULT_RETRY } from "../src/defaults.ts";
import type { AttemptOutcome, RetryPolicy } from "../src/types.ts";

const policy: RetryPolicy = { maxAttempts: 5, initialDelayMs: 1000, maxDelayMs: 60_000 };
const half = () => 0.5;
const http = (status: number, attempt = 1, retryAfterMs: number | null = null) =>
  decideRetry({ outcome: "http_error", httpStatus: status, retryAfterMs, attempt, policy }, half);

describe("decideRetry classification", () => {
  test("success is done", () => {
    expect(decideRetry({ outcome: "success", httpStatus: 200, retryAfterMs: null, attempt: 5, policy })).toEqual({
      kind: "done",
    });
  });
  test.each([408, 429, 500, 502, 503, 504, 599])("http %i retries", (s) => {
    expect(http(s).kind).toBe("retry");
  });
  test("410 is dead and pauses the job", () => {
    expect(http(410)).toEqual({ kind: "dead", reason: "http_410", pauseJob: true });
  });
  test.each([400, 401, 403, 404, 409, 422, 301, 302, 307, 308, 304, 100, 199])("http %i is dead", (s) => {
    expect(http(s)).toEqual({ kind: "dead", reason: `http_${s}`, pauseJob: false });
  });
  test.each<AttemptOutcome>(["timeout", "network_error", "handler_error", "lease_expired"])("%s retries", (o) => {
    expect(decideRetry({ outcome: o, httpStatus: null, retryAfterMs: null, attempt: 1, policy }, half)).toEqual({
      kind: "retry",
      delayMs: 500,
    });
  });
  test("retryable at the last attempt is dead: attempts_exhausted", () => {
    expect(http(503, 5)).toEqual({ kind: "dead", reason: "attempts_exhausted", pauseJob: false });
    expect(decideRetry({ outcome: "timeout", httpStatus: null, retryAfterMs: null, attempt: 9, policy })).toEqual({
      kind: "dead",
      reason: "attempts_exhausted",
      pauseJob: false,
    });
    expect(http(503, 4).kind).toBe("retry");
  });
  test("non-retryable keeps its own reason even on the last attempt", () => {
    expect(http(404, 5)).toEqual({ kind: "dead", reason: "http_404", pauseJob: false });
  });
  test("maxAttempts 1 means no retries", () => {
    expect(
      decideRetry({
        outcome: "timeout",
        httpStatus: null,
        retryAfterMs: null,
        attempt: 1,
        policy: { ...policy, maxAttempts: 1 },
      }).kind,
    ).toBe("dead");
  });
});

describe("Retry-After", () => {
  test("longer than backoff wins, capped at maxDelayMs", () => {
    expect(http(429, 1, 30_000)).toEqual({ kind: "retry", delayMs: 30_000 });
    expect(http(429, 1, 10_000_000)).toEqual({ kind: "retry", delayMs: 60_000 });
  });
  test("shorter than backoff: backoff wins", () => {
    expect(http(503, 3, 0)).toEqual({ kind: "retry", delayMs: 2000 }); // floor(0.5 * 4000)
  });
});

describe("backoffDelay", () => {
  test("full jitter over an exponential ceiling", () => {
    expect(backoffDelay(1, policy, () => 0.999)).toBe(999);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(2000);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
    expect(backoffDelay(20, policy, () => 0.5)).toBe(30_000);
  });
  test("overflow-safe for huge attempts", () => {
    expect(backoffDelay(5000, DEFAULT_RETRY, () => 0.5)).toBe(1_800_000);
    expect(backoffDelay(Number.MAX_SAFE_INTEGER, DEFAULT_RETRY, () => 0.99)).toBeLessThan(DEFAULT_RETRY.maxDelayMs);
  });
});

const policyArb = fc.record({
  maxAttempts: fc.integer({ min: 1, max: 20 }),
  initialDelayMs: fc.integer({ min: 0, max: 100_000 }),
  maxDelayMs: fc.integer({ min: 0, max: 86_400_000 }),
});

test("property: 0 ≤ delay ≤ cap, and Retry-After is honoured up to the cap", () => {
  fc.assert(
    fc.property(
      policyArb,
      fc.integer({ min: 1, max: 10_000 }),
      fc.option(fc.integer({ min: 0, max: 10 ** 9 }), { nil: null }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (p, attempt, retryAfterMs, r) => {
        const d = backoffDelay(attempt, p, () => r);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(p.maxDelayMs);
        expect(Number.isInteger(d)).toBe(true);
        const decision = decideRetry(
          { outcome: "http_error", httpStatus: 503, retryAfterMs, attempt, policy: p },
          () => r,
        );
        if (attempt >= p.maxAttempts) {
          expect(decision.kind).toBe("dead");
          return;
        }
        expect(decision.kind).toBe("retry");
        if (decision.kind !== "retry") return;
        expect(decision.delayMs).toBeGreaterThanOrEqual(0);
        expect(decision.delayMs).toBeLessThanOrEqual(p.maxDelayMs);
        if (retryAfterMs !== null) expect(decision.delayMs).toBe(Math.min(p.maxDelayMs, Math.max(retryAfterMs, d)));
      },
    ),
  );
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");
  test.each([
    ["120", 120_000],
    [" 5 ", 5000],
    ["0", 0],
    ["-3", 0],
    ["Wed, 01 Jan 2025 00:01:00 GMT", 60_000],
    ["Tue, 31 Dec 2024 23:00:00 GMT", 0],
    ["Wednesday, 01-Jan-25 00:00:30 GMT", 30_000],
  ])("%j → %j", (h, ms) => {
    expect(parseRetryAfter(h, now)).toBe(ms);
  });
  test.each([null, undefined, "", "soon", "1.5", "12abc", "NaN", "Infinity"])("%j → null", (h) => {
    expect(parseRetryAfter(h, now)).toBeNull();
  });
});

describe("backoff strategies", () => {
  const base = { maxAttempts: 10, initialDelayMs: 1000, maxDelayMs: 5000, jitter: "none" as const };
  const seq = (p: RetryPolicy) => [1, 2, 3, 4, 5, 6].map((a) => backoffDelay(a, p));
  test("exponential doubles, capped", () => {
    expect(seq({ ...base, backoff: "exponential" })).toEqual([1000, 2000, 4000, 5000, 5000, 5000]);
  });
  test("linear adds the initial delay, capped", () => {
    expect(seq({ ...base, backoff: "linear" })).toEqual([1000, 2000, 3000, 4000, 5000, 5000]);
  });
  test("fixed stays at the initial delay, capped", () => {
    expect(seq({ ...base, backoff: "fixed" })).toEqual([1000, 1000, 1000, 1000, 1000, 1000]);
    expect(seq({ ...base, backoff: "fixed", initialDelayMs: 9000 })).toEqual([5000, 5000, 5000, 5000, 5000, 5000]);
  });
  test("full jitter is a fraction of the same ceilings", () => {
    expect([1, 2, 3].map((a) => backoffDelay(a, { ...base, backoff: "linear", jitter: "full" }, () => 0.5))).toEqual([
      500, 1000, 1500,
    ]);
  });
  test("decideRetry uses the job's strategy; Retry-After still wins up to the cap", () => {
    const p: RetryPolicy = { ...base, backoff: "fixed" };
    expect(decideRetry({ outcome: "timeout", httpStatus: null, retryAfterMs: null, attempt: 4, policy: p })).toEqual({
      kind: "retry",
      delayMs: 1000,
    });
    expect(decideRetry({ outcome: "http_error", httpStatus: 429, retryAfterMs: 3000, attempt: 4, policy: p })).toEqual({
      kind: "retry",
      delayMs: 3000,
    });
    expect(
      decideRetry({ outcome: "http_error", httpStatus: 429, retryAfterMs: 60_000, attempt: 4, policy: p }),
    ).toEqual({ kind: "retry", delayMs: 5000 });
  });
  test("secret_missing is dead at once", () => {
    expect(
      decideRetry({ outcome: "secret_missing", httpStatus: null, retryAfterMs: null, attempt: 1, policy: base }),
    ).toEqual({
      kind: "dead",
      reason: "secret_missing",
      pauseJob: false,
    });
  });

  const strategyArb = fc.record({
    maxAttempts: fc.integer({ min: 1, max: 20 }),
    initialDelayMs: fc.integer({ min: 0, max: 100_000 }),
    maxDelayMs: fc.integer({ min: 0, max: 86_400_000 }),
    backoff: fc.constantFrom("exponential" as const, "linear" as const, "fixed" as const),
    jitter: fc.constantFrom("full" as const, "none" as const),
  });

  test("property: every strategy stays within [0, maxDelayMs], never shrinks without jitter, and full jitter stays under the no-jitter delay", () => {
    fc.assert(
      fc.property(
        strategyArb,
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (p, attempt, r) => {
          const d = backoffDelay(attempt, p, () => r);
          expect(d).toBeGreaterThanOrEqual(0);
          expect(d).toBeLessThanOrEqual(p.maxDelayMs);
          expect(Number.isInteger(d)).toBe(true);
          const plain = { ...p, jitter: "none" as const };
          expect(backoffDelay(attempt + 1, plain)).toBeGreaterThanOrEqual(backoffDelay(attempt, plain));
          if (p.jitter === "full") expect(d).toBeLessThanOrEqual(backoffDelay(attempt, plain));
        },
      ),
    );
  });

  test("property: linear grows by exactly initialDelayMs until the cap; fixed never changes", () => {
    fc.assert(
      fc.property(strategyArb, fc.integer({ min: 1, max: 1000 }), (p, attempt) => {
        const lin = { ...p, backoff: "linear" as const, jitter: "none" as const };
        const a = backoffDelay(attempt, lin),
          b = backoffDelay(attempt + 1, lin);
        expect(b).toBe(Math.min(p.maxDelayMs, a + p.initialDelayMs));
        const fix = { ...p, backoff: "fixed" as const, jitter: "none" as const };
        expect(backoffDelay(attempt, fix)).toBe(Math.min(p.maxDelayMs, p.initialDelayMs));
      }),
    );
  });
});
