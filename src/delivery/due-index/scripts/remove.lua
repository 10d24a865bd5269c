--[[
  Removes one message id from a partition's due index, dropping buckets it leaves empty.

  KEYS[1]  the partition's bucket set (see add.lua)
  ARGV[1]  the prefix of bucket keys (same hash tag as KEYS[1])
  ARGV[2]  the message id
  ARGV[3]  the bucket id to look in, or '' to look in every bucket (O(buckets))

  Returns the number of entries removed (an id re-added with another due time can sit in two buckets).
]]
local buckets
if ARGV[3] ~= '' then
  buckets = { ARGV[3] }
else
  buckets = redis.call('ZRANGE', KEYS[1], 0, -1)
end
local removed = 0
for _, bucket in ipairs(buckets) do
  local key = ARGV[1] .. bucket
  removed = removed + redis.call('ZREM', key, ARGV[2])
  if redis.call('EXISTS', key) == 0 then
    redis.call('ZREM', KEYS[1], bucket)
  end
end
return removed
