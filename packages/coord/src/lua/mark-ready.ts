// markReady: keep the EARLIEST due time, and make every call change the score.
//
// Why change the score even when the new work is due later than what is indexed: the claimer reads
// score T0, looks in Postgres, then reschedules with a compare-and-set on T0. If a job due at T1 > T0
// commits after that look, "keep the earliest" alone would leave T0 in place, the CAS would succeed
// and the claimer's next time (computed without the new job) would hide it. So when the member
// exists we also nudge its score TOUCH_NUDGE_MS earlier: the due time only ever moves earlier (safe,
// at most ~1 ms per 1024 calls) and every in-flight CAS on the old score fails, leaving the tenant
// due for the next tick. 2^-10 ms is exact for epoch-ms scores below 2^43 (year 2248).
//
// KEYS[1]  the ready zset `${prefix}ready:${type}` (member = tenant id, score = due epoch ms)
// ARGV[1]  tenant id
// ARGV[2]  dueAtMs of the new work
// Returns  1 if the member was added, 0 if it already existed (score lowered or nudged)
export const TOUCH_NUDGE_MS = 1 / 1024;

export const MARK_READY_SCRIPT = `
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
local due = tonumber(ARGV[2])
if not current then
  redis.call('ZADD', KEYS[1], string.format('%.17g', due), ARGV[1])
  return 1
end
local score = math.min(tonumber(current) - ${TOUCH_NUDGE_MS}, due)
redis.call('ZADD', KEYS[1], string.format('%.17g', score), ARGV[1])
return 0
`;
