--[[
fixed-window-count (a block of check-batch.lua's count loop, algorithm 3): admissions in window
k = floor(t / w) (field f<w>:<k> of the counters hash; counters.lua). Not exact: up to 2 x limit
within w across a window's edge (kept to show the v1 defect; docs/limiter.md).

Defines: sets c and r (retry; -1 not hit).
Expects: kc, set, i, t, w, lim, floor, fmt.
]]
local k = floor(t / w)
c = tonumber(redis.call('HGET', kc, set.field[i] .. ':' .. fmt('%d', k))) or 0
if c >= lim then r = (k + 1) * w - t end
