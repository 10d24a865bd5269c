--[[
counters: the state of the counter algorithms, one hash per subject, named by what it counts, so
rules counting alike share it and an admission updates it once:
  f<w>:<k> = admitted in fixed window k, f<w> = newest window index written
    (fixed-window-count.lua)
  s<b>:<k> = admitted in sliding-counter bucket k (b = ceil(w / 10) ms), s<b> = newest bucket
    index written (sliding-counter-count.lua)
  t<w>:<limit> = token-bucket theoretical arrival time, a double (token-bucket-count.lua)
TTL (cleanup only): D = the longest span a field still matters after its window or bucket began
(fixed-window: w, sliding-counter: 11 buckets, token-bucket: w), set when an admission creates a
fixed-window or sliding-counter field (HINCRBY answered 1: it was created at t >= the start of its
window, which matters until start + span <= t + D), and on every admission of a set with a
token-bucket rule (its tat <= t + w must outlive t + w). An undo adds no field that must outlive
them, so it leaves the TTL alone.

Defines:
  counterField(a, w, lim) -> field, span: the field (prefix) of a rule of algorithm a, and how long
    a window's or bucket's field matters after it began (nil for a sliding-log rule);
  undoCounter(kc, a, w, lim, at, seen): takes back an admission at `at` under one rule: the count
    of its window or bucket, if still stored and > 0, less one; a token bucket's tat becomes
    max(tat - T, at); seen: the fields this undo took back already (rules that share a field were
    counted once, and are undone once).
Expects: ceil, floor, fmt.
]]
local function counterField(a, w, lim)
  if a == 2 then
    local b = ceil(w / 10)
    return 's' .. fmt('%d', b), 11 * b
  elseif a == 3 then
    return 'f' .. fmt('%d', w), w
  elseif a == 4 then
    return 't' .. fmt('%d', w) .. ':' .. fmt('%d', lim), w
  end
end
local function undoCounter(kc, a, w, lim, at, seen)
  local field = counterField(a, w, lim)
  if not field then return end
  if a == 2 then
    field = field .. ':' .. fmt('%d', floor(at / ceil(w / 10)))
  elseif a == 3 then
    field = field .. ':' .. fmt('%d', floor(at / w))
  end
  if seen[field] then return end
  seen[field] = true
  local v = tonumber(redis.call('HGET', kc, field))
  if not v then return end
  if a == 4 then
    local tat = v - w / lim
    if tat < at then tat = at end
    redis.call('HSET', kc, field, fmt('%.17g', tat))
  elseif v > 0 then
    redis.call('HINCRBY', kc, field, -1)
  end
end
