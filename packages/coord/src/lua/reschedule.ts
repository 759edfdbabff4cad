// reschedule: compare-and-set on the tenant's score, after the claimer looked in Postgres.
// Scores round-trip exactly (Redis and Lua both print %.17g), so equality on doubles is exact.
// Any markReady since the claimer's read changed the score (see mark-ready.ts), so the CAS fails and
// the (due) score stays: the claimer looks again next tick instead of hiding work.
//
// KEYS[1]  the ready zset `${prefix}ready:${type}`
// ARGV[1]  tenant id
// ARGV[2]  expectedDueAtMs: the score the claimer read from readyTenants
// ARGV[3]  nextDueAtMs, or '' to remove the member (no pending work left)
// Returns  1 if applied, 0 if the score moved (or the member is gone)
export const RESCHEDULE_SCRIPT = `
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not current or tonumber(current) ~= tonumber(ARGV[2]) then
  return 0
end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
`;
