--[[
sliding-counter-count (a block of check-batch.lua's count loop, algorithm 2): admissions are
counted per bucket of b = ceil(w / 10) ms (field s<b>:<k> of the counters hash, k = floor(t / b);
counters.lua). The count at t is t's bucket and the nine before it in full, plus the one before
those in proportion to the part of it still in the window: approximate, with the bounded error of
docs/limiter.md.

Defines: sets c and r (retry; -1 not hit).
Expects: kc, set, i, t, w, lim, ceil, floor, fmt.
]]
local b = ceil(w / 10)
local k = floor(t / b)
local m = t - k * b
local f = set.field[i] .. ':'
local v = redis.call('HMGET', kc, f .. fmt('%d', k - 10), f .. fmt('%d', k - 9), f .. fmt('%d', k - 8),
  f .. fmt('%d', k - 7), f .. fmt('%d', k - 6), f .. fmt('%d', k - 5), f .. fmt('%d', k - 4),
  f .. fmt('%d', k - 3), f .. fmt('%d', k - 2), f .. fmt('%d', k - 1), f .. fmt('%d', k))
local S = 0
for j = 2, 11 do
  S = S + (tonumber(v[j]) or 0)
end
local x = S * b + (tonumber(v[1]) or 0) * (b - m)
c = floor(x / b)
if x >= lim * b then r = b - m end
