--[[
token-bucket-count (a block of check-batch.lua's count loop, algorithm 4): GCRA with T = w / lim;
field t<w>:<lim> of the counters hash (counters.lua) holds the theoretical arrival time tat. With
x = max(tat, t): the count is ceil((x - t) / T), the attempt is refused when x + T - t > w, and an
admission sets tat = x + T (counters-record.lua).

Defines: sets c, r (retry; -1 not hit) and arrival[i] = x.
Expects: kc, set, i, t, w, lim, arrival, ceil.
]]
local T = w / lim
local x = tonumber(redis.call('HGET', kc, set.field[i])) or t
if t > x then x = t end
arrival[i] = x
c = ceil((x - t) / T - 1e-9)
if x + T - t > w then r = ceil(x + T - w - t) end
