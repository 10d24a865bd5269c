--[[
lease-1: give back unused tokens of a token-bucket (GCRA) rule, then lease up to `want` tokens.

KEYS[1] the lease state of one (subject, rule): a string, the theoretical arrival time `tat` (ms,
  may be fractional). Kept apart from the exact store's counters: a leased rule counts only leases.
ARGV: want (tokens asked, >= 0), back (unused tokens returned, >= 0), windowMs, limit,
  now ('' = Redis TIME), minTtlMs (floor of the TTL).
Returns {granted, retryAfterMs, inUse, now}: granted in [0, want]; retryAfterMs > 0 only when
  want > 0 and nothing could be granted (ceil(x + T - w - t), as an exact check's); inUse = tokens
  in use after this call, ceil((max(tat, t) - t) / T); now = the decision time used. -1 on
  malformed arguments.

GCRA with T = w / limit, x = max(tat, t): `m` more tokens fit when x + m*T - t <= w, so
granted = min(want, floor((t + w - x) / T + 1e-9)) and tat = x + granted*T. A token given back
moves tat back by T, never below t (a returned token is one never taken). So the tokens granted
and not given back, over any span, never exceed what exact checks would have admitted in it.
The TTL (tat - t, at least 1 ms, at least minTtlMs) only cleans up: an absent key is tat = t.
]]

local want, back, w, limit, minTtl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[6])
if not (want and back and w and limit and minTtl) or want < 0 or back < 0 or w <= 0 or limit <= 0 then return -1 end
local t
if ARGV[5] == '' then
  local tm = redis.call('TIME')
  t = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
else
  t = tonumber(ARGV[5])
  if not t then return -1 end
end
local T = w / limit
local tat = tonumber(redis.call('GET', KEYS[1])) or t
if back > 0 then tat = math.max(t, tat - back * T) end
local x = math.max(tat, t)
local granted = 0
local retry = 0
if want > 0 then
  granted = math.min(want, math.floor((t + w - x) / T + 1e-9))
  if granted < 0 then granted = 0 end
  if granted == 0 then retry = math.ceil(x + T - w - t) end
end
tat = x + granted * T
if tat > t then
  redis.call('SET', KEYS[1], string.format('%.17g', tat), 'PX', math.max(math.ceil(tat - t), 1, minTtl))
else
  redis.call('DEL', KEYS[1])
end
local inUse = math.ceil((tat - t) / T - 1e-9)
if inUse < 0 then inUse = 0 end
return {granted, retry, inUse, string.format('%d', t)}
