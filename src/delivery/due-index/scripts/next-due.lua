--[[
  The earliest due time in a partition's due index, up to a limit: how long a dispatcher with
  nothing due may sleep before the next entry is due. The ready set scores each queue by its
  earliest entry, or earlier (add.lua only lowers a score); a queue listed too early is rescored
  here by its real head, so the answer is exact (O(queues listed by the limit · log entries)).

  KEYS[1]  the partition's ready set (see add.lua)
  ARGV[1]  the prefix of queue keys (same hash tag as KEYS[1])
  ARGV[2]  a time (ms): only entries due at or before it count

  Returns the earliest due time (ms), or nil when nothing is due by ARGV[2].
]]
local earliest = nil
for _, queue in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])) do
  local head = redis.call('ZRANGE', ARGV[1] .. queue, 0, 0, 'WITHSCORES')
  if head[2] == nil then
    redis.call('ZREM', KEYS[1], queue)
  else
    redis.call('ZADD', KEYS[1], head[2], queue)
    local due = tonumber(head[2])
    if due <= tonumber(ARGV[2]) and (earliest == nil or due < earliest) then earliest = due end
  end
end
return earliest
