--[[
server-time: the Redis server's clock (TIME), read at most once per call.
Numbers handed to redis.call are printed with %.17g, which costs more than the command: times and
TTLs therefore go in as strings, printed once with %d (or taken from ARGV as sent).

Defines: serverTime() -> ms, msText (epoch ms, and as %d text).
Expects: floor, fmt.
]]
local redisNow, redisNowText
local function serverTime()
  if not redisNow then
    local tm = redis.call('TIME')
    redisNow = tonumber(tm[1]) * 1000 + floor(tonumber(tm[2]) / 1000)
    redisNowText = fmt('%d', redisNow)
  end
  return redisNow, redisNowText
end
