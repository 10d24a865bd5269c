--[[
packed-log-count (a block of check-batch.lua's count loop, a sliding-log rule, packed log, no
scheduled entries after ca): entries lo + 1 .. hi are in (ca - w, ca]; the oldest and newest
entries often bound the window, saving both binary searches.

Defines: sets c and r (retry; -1 not hit).
Expects: P, pn, tf, E, pbase, oldest, newest (log-trim.lua), ca, w, lim, H, pcount, sunpack.
]]
if pn > 0 then
  local hi, lo = pn, 0
  if newest > ca then hi = pcount(P, tf, E, pn, ca - pbase) end
  if oldest <= ca - w then lo = pcount(P, tf, E, pn, ca - w - pbase) end
  c = hi - lo
  if c >= lim then r = sunpack(tf, P, H + 1 + (lo + c - lim) * E) + pbase + w - ca end
end
