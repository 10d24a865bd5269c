--[[
  Counts the entries of a partition's due index (O(queues · log entries)).

  KEYS[1]  the partition's ready set (see add.lua)
  ARGV[1]  the prefix of queue keys (same hash tag as KEYS[1])
  ARGV[2]  '' to count every entry, or a time (ms): count only entries due at or before it

  Returns the number of entries.
]]
local total = 0
if ARGV[2] == '' then
  for _, queue in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    total = total + redis.call('ZCARD', ARGV[1] .. queue)
  end
else
  for _, queue in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])) do
    total = total + redis.call('ZCOUNT', ARGV[1] .. queue, '-inf', ARGV[2])
  end
end
return total
