--[[
sorted-set-log: the sliding log beyond packedMax entries (and as releases before 2026-12-01 wrote
every log): a sorted set, score = time ms, member = an integer (13 bits when anonymous in a small
log, else 32). The packed entries move into it with one ZADD (anonymous entries and repeats of
member 0 get free 32-bit members); a decision finding no packed log asks ZCARD, and a sorted set
that a trim leaves with at most packedMax / 2 entries moves back into a packed log (hysteresis: a
log at the cap does not move at every admission; log-trim.lua). A release before 2026-12-01
never reads the packed key: see docs/upgrading.md.

Defines: toSortedSet(kl, s, ca, m, seed): moves the packed log s (plus one entry at ca with
  member m, when ca is given) into the sorted set kl, which must be absent.
Expects: fmt (and what packed-log.lua expects).
]]
--- @include "packed-log"
local function toSortedSet(kl, s, ca, m, seed)
  local times, members, n = pdecode(s)
  local args, used, na = {}, {}, 0
  local function add(time, member)
    if member == nil or used[member] then
      member = ((seed % 4294967296) * 1009 + na) % 4294967296 - 2147483648
      while used[member] do member = (member + 2147483649) % 4294967296 - 2147483648 end
    end
    used[member] = true
    na = na + 2
    args[na - 1], args[na] = fmt('%d', time), fmt('%d', member)
  end
  for j = 1, n do
    local member
    if members and members[j] ~= 0 then member = members[j] end
    add(times[j], member)
  end
  if ca then add(ca, m) end
  -- In ZADDs of at most 1000 entries: unpack puts every argument on the Lua stack (~8000 slots).
  for first = 1, na, 2000 do
    redis.call('ZADD', kl, unpack(args, first, math.min(first + 1999, na)))
  end
end
