--[[
scheduled: sliding-log counts of scheduled sends (src/limiter/types.ts, step 4). A check with
countAt a > t counts and logs the attempt at a (counters still at t) and raises S (the scheduled
key: the latest count time admitted later than its decision time). Sliding-log rules count
n(a) = ZCOUNT (a - w, a] while S <= a (the common path: the MGET already said so); when S > a the
log may hold entries later than a, so the entries in (a - L', a + L') (L' = longest sliding-log
window) are read once and every rule takes the maximum of n(u) over u = a and the entry times in
(a, a + w). A refusal of an attempt with a > t bans nothing: its breach lies at a, not in the
present.

Defines:
  scheduledTimes(kl, P, ca, Ls) -> times, nt: the log's entry times in (ca - Ls, ca + Ls),
    ascending, from the packed log P when there is one, else from the sorted set kl;
  windowMax(times, nt, ca, w, lim) -> c, r: the most entries in a window (u - w, u] over u = ca
    and the entry times in (ca, ca + w), and the largest retry over the windows holding >= lim
    (-1: none).
Expects: fmt (and what packed-log.lua expects).
]]
--- @include "packed-log"
local function scheduledTimes(kl, P, ca, Ls)
  local times, nt = {}, 0
  if P then
    local all, _, na = pdecode(P)
    for j = 1, na do
      local v = all[j]
      if v > ca - Ls and v < ca + Ls then
        nt = nt + 1
        times[nt] = v
      end
    end
  else
    local entries = redis.call('ZRANGEBYSCORE', kl, '(' .. fmt('%d', ca - Ls), '(' .. fmt('%d', ca + Ls), 'WITHSCORES')
    nt = #entries / 2
    for j = 1, nt do times[j] = tonumber(entries[2 * j]) end
  end
  return times, nt
end
local function windowMax(times, nt, ca, w, lim)
  local low = 1
  while low <= nt and times[low] <= ca - w do low = low + 1 end
  local high = low
  while high <= nt and times[high] <= ca do high = high + 1 end
  local u, best, retry = ca, 0, -1
  while true do
    local c = high - low
    if c > best then best = c end
    if c >= lim then
      local r = times[high - lim] + w - u
      if r > retry then retry = r end
    end
    if high > nt or times[high] >= ca + w then break end
    u = times[high]
    while high <= nt and times[high] == u do high = high + 1 end
    while times[low] <= u - w do low = low + 1 end
  end
  return best, retry
end
