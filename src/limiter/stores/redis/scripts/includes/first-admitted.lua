--[[
first-admitted: the count time a deferred check is recorded at (src/limiter/types.ts, "Deferral";
the same computation as src/limiter/first-admitted.ts). Each run of lim consecutive entries
e_i <= ... <= e_j (j = i + lim - 1) with e_j - e_i < w blocks every u in [e_j - w + 1, e_i + w - 1]
(a window of w containing u would hold lim entries with u's); the answer is the first u >= start
outside every blocked interval of every sliding-log rule, found in one sweep of the intervals
sorted by their start. Off the common path (a refusal with deferUntil), so a function.

Defines:
  firstAdmitted(kl, P, set, start) -> u: reads the trimmed log's times, from the packed log P
    when there is one, else from the sorted set kl.
Expects: fmt, and packed-log.lua's pdecode.
]]
local function firstAdmitted(kl, P, set, start)
  local times, members, nt
  if P then
    times, members, nt = pdecode(P)
  else
    local entries = redis.call('ZRANGE', kl, 0, -1, 'WITHSCORES')
    times, nt = {}, #entries / 2
    for j = 1, nt do times[j] = tonumber(entries[2 * j]) end
  end
  local blocks = {}
  for r = 1, set.n do
    local w, lim = set.w[r], set.lim[r]
    if set.alg[r] == 1 then
      for i = 1, nt - lim + 1 do
        local first, last = times[i], times[i + lim - 1]
        if last - first < w and first + w - 1 >= start then
          blocks[#blocks + 1] = { last - w + 1, first + w - 1 }
        end
      end
    end
  end
  table.sort(blocks, function(x, y) return x[1] < y[1] end)
  local u = start
  for b = 1, #blocks do
    if blocks[b][1] > u then break end
    if blocks[b][2] >= u then u = blocks[b][2] + 1 end
  end
  return u
end
