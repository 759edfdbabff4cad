// Token bucket, atomically: read, refill, take, write, expire — one round trip. Mirrors token-bucket.ts.
//
// KEYS[1]  the bucket hash `${prefix}rl:${key}`: fields `tokens` (float) and `ts` (epoch ms of last refill)
// ARGV[1]  capacity: tokens refilled per window, also the burst size (integer >= 1)
// ARGV[2]  windowMs: the refill period (> 0)
// ARGV[3]  nowMs: the caller's clock. Passed in rather than read with TIME so the memory driver, tests
//          and a replayed script agree; executors' clocks are NTP-close and a skewed clock only
//          shifts refill, it never refills twice (no refill while now <= ts).
// Returns  { allowed (0|1), remaining (whole tokens), retryAfterMs }
//
// The key expires after one window: by then the bucket is full again, which is what a missing key means.
export const LIMIT_SCRIPT = `
local capacity = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local rate = capacity / window
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = capacity
  ts = now
end
if now > ts then
  tokens = tokens + (now - ts) * rate
  ts = now
end
tokens = math.min(capacity, tokens)
local allowed = 0
local retry = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  retry = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', string.format('%.17g', ts))
redis.call('PEXPIRE', KEYS[1], math.ceil(window))
return { allowed, math.floor(tokens), retry }
`;
