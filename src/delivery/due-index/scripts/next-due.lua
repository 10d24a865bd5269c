--[[
  The earliest due time in a partition's due index, up to a limit: how long a dispatcher with
  nothing due may sleep before the next entry is due (O(buckets up to the limit)).

  KEYS[1]  the partition's bucket set (see add.lua)
  ARGV[1]  the prefix of bucket keys (same hash tag as KEYS[1])
  ARGV[2]  a time (ms): only entries due at or before it count

  Returns the earliest due time (ms), or nil when nothing is due by ARGV[2]. Every bucket up to the
  limit is read, so the answer is exact even for buckets written under another width.
]]
local earliest = nil
for _, bucket in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])) do
  local first = redis.call('ZRANGEBYSCORE', ARGV[1] .. bucket, '-inf', ARGV[2], 'WITHSCORES', 'LIMIT', 0, 1)
  if first[2] ~= nil then
    local due = tonumber(first[2])
    if earliest == nil or due < earliest then earliest = due end
  end
end
return earliest
