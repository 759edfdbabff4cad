// The token bucket, as a pure function. The memory driver calls it directly; lua/limit.ts is the
// same arithmetic line for line (Lua numbers are IEEE doubles like JS numbers, so both drivers give
// identical answers for identical inputs — the shared test suite relies on that).

export interface BucketState {
  tokens: number;
  /** Time (epoch ms) up to which `tokens` includes refill. */
  ts: number;
}

export function takeToken(state: BucketState | undefined, capacity: number, windowMs: number, nowMs: number) {
  const rate = capacity / windowMs; // tokens per ms
  let tokens = state ? state.tokens : capacity;
  let ts = state ? state.ts : nowMs;
  // A clock behind `ts` (another executor's clock runs ahead) refills nothing rather than going negative.
  if (nowMs > ts) {
    tokens += (nowMs - ts) * rate;
    ts = nowMs;
  }
  tokens = Math.min(capacity, tokens); // also clamps after a caller lowered the limit
  let allowed = false;
  let retryAfterMs = 0;
  if (tokens >= 1) {
    tokens -= 1;
    allowed = true;
  } else {
    retryAfterMs = Math.ceil((1 - tokens) / rate);
  }
  return { state: { tokens, ts }, result: { allowed, remaining: Math.floor(tokens), retryAfterMs } };
}
