--[[
  Claims due entries of a partition: reads and removes them in one atomic step, so two claimers
  never get the same id. Walks the buckets that start at or before now, in time order; within a bucket takes
  entries by score (due ms, ties by id). A bucket emptied here disappears (Redis deletes an empty
  sorted set) and is dropped from the bucket set; so is a listed bucket found missing.

  KEYS[1]  the partition's bucket set (see add.lua)
  ARGV[1]  the prefix of bucket keys (same hash tag as KEYS[1])
  ARGV[2]  now (ms): entries due at or before it are claimed
  ARGV[3]  the most entries to claim (> 0; the caller caps it so one call stays short)

  Returns the claimed message ids, earliest due first.
]]
local limit = tonumber(ARGV[3])
local claimed = {}
-- Each listed bucket yields at least one entry unless it is stale, so `limit` buckets suffice.
local buckets = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, limit)
for _, bucket in ipairs(buckets) do
  local key = ARGV[1] .. bucket
  local ids = redis.call('ZRANGEBYSCORE', key, '-inf', ARGV[2], 'LIMIT', 0, limit - #claimed)
  -- ZREM in slices: unpack() of a long list overflows the Lua stack.
  for first = 1, #ids, 1000 do
    redis.call('ZREM', key, unpack(ids, first, math.min(first + 999, #ids)))
  end
  for _, id in ipairs(ids) do
    claimed[#claimed + 1] = id
  end
  if redis.call('EXISTS', key) == 0 then
    redis.call('ZREM', KEYS[1], bucket)
  end
  if #claimed >= limit then
    break
  end
end
return claimed
