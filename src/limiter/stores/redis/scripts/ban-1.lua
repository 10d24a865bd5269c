--[[
ban-1: ban a subject for ms from now, unless a longer ban is already in force.

KEYS[1] ban (string: the ban's end time in epoch ms).
ARGV: ms (> 0), now ('' = Redis TIME), minTtlMs (floor of the TTL).
Returns: 1 when the ban was written, 0 when a ban ending at or after now + ms was kept,
  -1 on malformed arguments.
Decisions compare against the stored end; the PX TTL (the remaining time) only cleans up.
]]

local ms, minTtl = tonumber(ARGV[1]), tonumber(ARGV[3])
if not (ms and minTtl) then return -1 end
local t
if ARGV[2] == '' then
  local tm = redis.call('TIME')
  t = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
else
  t = tonumber(ARGV[2])
  if not t then return -1 end
end
local banEnd = t + ms
local current = tonumber(redis.call('GET', KEYS[1]))
if current and current >= banEnd then return 0 end
redis.call('SET', KEYS[1], string.format('%d', banEnd), 'PX', math.max(ms, minTtl))
return 1
