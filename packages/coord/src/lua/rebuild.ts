// rebuildReady in two scripts: fill a temp zset in chunks (an index can be far larger than one
// command should carry), then merge it into the live key atomically and set the marker.

// REBUILD_CHUNK_SCRIPT
// KEYS[1]  the temp zset `${prefix}ready:${type}:rebuild:<random>`
// ARGV[1]  ttlMs: the temp key dies on its own if the rebuilding process does
// ARGV[2…] score, member, score, member, … (ZADD LT: a tenant listed twice keeps its earliest time)
// Returns  the number of members added
export const REBUILD_CHUNK_SCRIPT = `
local added = redis.call('ZADD', KEYS[1], 'LT', unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return added
`;

// REBUILD_SWAP_SCRIPT — the "RENAME" step, as a merge: ZUNIONSTORE … AGGREGATE MIN keeps a live score
// that is earlier than the snapshot's (a markReady that raced the caller's Postgres read), see
// Coordinator.rebuildReady.
// KEYS[1]  the live zset `${prefix}ready:${type}`
// KEYS[2]  the temp zset (may not exist when the rebuild had no entries)
// KEYS[3]  the marker `${prefix}ready:${type}:built`
// Returns  the size of the live index
export const REBUILD_SWAP_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], KEYS[1], 'AGGREGATE', 'MIN')
  redis.call('DEL', KEYS[2])
end
redis.call('SET', KEYS[3], '1')
return redis.call('ZCARD', KEYS[1])
`;

// HAS_INDEX_SCRIPT
// KEYS[1]  the marker `${prefix}ready:${type}:built`
// Returns  1 if present
export const HAS_INDEX_SCRIPT = `
return redis.call('EXISTS', KEYS[1])
`;
