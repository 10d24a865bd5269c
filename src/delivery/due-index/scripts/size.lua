--[[
  Counts the entries of a partition's due index, due or not (O(buckets)).

  KEYS[1]  the partition's bucket set (see add.lua)
  ARGV[1]  the prefix of bucket keys (same hash tag as KEYS[1])

  Returns the number of entries over all buckets.
]]
local total = 0
for _, bucket in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  total = total + redis.call('ZCARD', ARGV[1] .. bucket)
end
return total
