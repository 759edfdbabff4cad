// decideSettlement: a delivery's result and the trigger's retry policy (the job's backoff and jitter,
// claimed with it) become what settle writes. Pure: no database.
import { expect, it } from "vitest";
import type { DeliveryResult } from "@fairway/core";
import { decideSettlement, type LeaseHeld } from "../src/settler.ts";

const failed: DeliveryResult = {
  outcome: "http_error",
  httpStatus: 503,
  durationMs: 3,
  error: "HTTP 503",
  responseBody: "busy",
  retryAfterMs: null,
};
const held = (attempt: number, extra: Partial<LeaseHeld>): LeaseHeld => ({
  id: "trg_1",
  leaseToken: "tok",
  attempt,
  maxAttempts: 10,
  initialDelayMs: 1000,
  maxDelayMs: 4500,
  ...extra,
});
const now = 1_000_000;
const delays = (extra: Partial<LeaseHeld>) =>
  [1, 2, 3, 4, 5].map(
    (a) => decideSettlement(held(a, extra), failed, new Date(now), now, () => 0.5).nextAttemptAt!.getTime() - now,
  );

it("each strategy's retry times, capped by maxDelayMs", () => {
  expect(delays({ backoff: "exponential", jitter: "none" })).toEqual([1000, 2000, 4000, 4500, 4500]);
  expect(delays({ backoff: "linear", jitter: "none" })).toEqual([1000, 2000, 3000, 4000, 4500]);
  expect(delays({ backoff: "fixed", jitter: "none" })).toEqual([1000, 1000, 1000, 1000, 1000]);
  expect(delays({ backoff: "linear", jitter: "full" })).toEqual([500, 1000, 1500, 2000, 2250]);
  expect(delays({})).toEqual([500, 1000, 2000, 2250, 2250]); // exponential, full jitter: the defaults
});

it("keeps what was sent and received for the attempt's record; secret_missing is dead at once", () => {
  const request = {
    method: "GET",
    url: "https://x.test/?k=${secrets.K}",
    headers: { "webhook-id": "trg_1" },
    body: null,
  };
  const s = decideSettlement(
    held(1, {}),
    { ...failed, request, responseHeaders: { "retry-after": "1" }, responseTruncated: true },
    new Date(now),
    now,
  );
  expect(s.detail).toEqual({ request, responseHeaders: { "retry-after": "1" }, responseTruncated: true });
  const gone = decideSettlement(
    held(1, {}),
    { ...failed, outcome: "secret_missing", httpStatus: null },
    new Date(now),
    now,
  );
  expect(gone).toMatchObject({ status: "dead", reason: "secret_missing", detail: null });
});
