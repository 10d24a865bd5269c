--[[
  One worker's heartbeat in the roster of live workers, and the roster's size.

  KEYS[1]  the roster: a sorted set of worker ids scored by when their heartbeat lapses (ms)
  ARGV[1]  this worker's id
  ARGV[2]  how long this heartbeat lasts, in milliseconds (Redis time, so workers' clocks may differ)

  Returns the number of workers whose heartbeat has not lapsed, this one included.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return redis.call('ZCARD', KEYS[1])
