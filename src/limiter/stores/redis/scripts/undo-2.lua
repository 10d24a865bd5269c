--[[
undo-2: take back an admitted attempt (a later admission step rejected it).

KEYS[1] log (sorted set), KEYS[2] counters (hash); both of one subject (see check-batch.lua).
ARGV: member (the request id's 32-bit member), then n, then n x (algorithm, windowMs, limit,
      banMs) as in check-batch.lua. The admission time a is the entry's own score (the caller's
      `at` only repeats it).
Returns: 1 when the attempt was recorded and is now taken back, 0 when it was not recorded
  (never admitted, trimmed, or already undone: a no-op, so undo can be retried safely),
  -1 on malformed arguments.

For an attempt admitted at a: the log entry is removed; the fixed-window count of window
floor(a / w) is decremented if still stored and > 0; the sliding-counter bucket floor(a / b)
likewise; the token bucket's tat becomes max(tat - T, a) if one is stored. TTLs are left alone.
Rules that share a counter (as named in check-batch.lua) were counted once and are undone once.
]]

local member, n = ARGV[1], tonumber(ARGV[2])
if not n then return -1 end
local a = tonumber(redis.call('ZSCORE', KEYS[1], member))
if not a then return 0 end
redis.call('ZREM', KEYS[1], member)

local floor, ceil, fmt = math.floor, math.ceil, string.format
local kc = KEYS[2]
local seen = {}
local p = 3
for _ = 1, n do
  local alg, w, lim = tonumber(ARGV[p]), tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2])
  if not (alg and w and lim) then return -1 end
  p = p + 4
  local field
  if alg == 2 then
    local b = ceil(w / 10)
    field = 's' .. fmt('%d', b) .. ':' .. fmt('%d', floor(a / b))
  elseif alg == 3 then
    field = 'f' .. fmt('%d', w) .. ':' .. fmt('%d', floor(a / w))
  elseif alg == 4 then
    field = 't' .. fmt('%d', w) .. ':' .. fmt('%d', lim)
  end
  if field and not seen[field] then
    seen[field] = true
    local v = tonumber(redis.call('HGET', kc, field))
    if v then
      if alg == 4 then
        local tat = v - w / lim
        if tat < a then tat = a end
        redis.call('HSET', kc, field, fmt('%.17g', tat))
      elseif v > 0 then
        redis.call('HINCRBY', kc, field, -1)
      end
    end
  end
end
return 1
