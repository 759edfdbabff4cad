// readyTenants: the earliest-due tenants. A script (not a plain ZRANGE) only so that both drivers'
// adapters stay three methods wide (evalsha, eval, publish) and decode replies the same way.
//
// KEYS[1]  the ready zset `${prefix}ready:${type}`
// ARGV[1]  nowMs: only members with score <= nowMs
// ARGV[2]  limit: at most this many
// Returns  flat { member, score, member, score, … } earliest first (ties by member, as Redis orders them)
export const READY_TENANTS_SCRIPT = `
return redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]), 'WITHSCORES')
`;
