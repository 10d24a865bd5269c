--[[
packed-log-record (a block of check-batch.lua's record step, a packed log with room for one more
entry): the admission at ca with its member, if any. An entry that fits the log's base, time width
and member column is appended (spliced in when out of order); else the log is written afresh with
a new base, width or member column (at most a few times per log).

Defines: sets P and dirty.
Expects: P, pn, tw, mw, tf, E, pbase, newest (log-trim.lua), ca, memberNumber, H, SPAN, TMF,
  pcount, pdecode, pencode, spack, ssub.
]]
local m = memberNumber
if pn > 0 and ca >= pbase and ca - pbase < SPAN[tw] and (m == nil or mw == 4) then
  local entry
  if mw == 4 then entry = spack(TMF[tw], ca - pbase, m or 0) else entry = spack(tf, ca - pbase) end
  if ca >= newest then
    P = P .. entry
  else
    local at = H + 1 + pcount(P, tf, E, pn, ca - pbase) * E
    P = ssub(P, 1, at - 1) .. entry .. ssub(P, at)
  end
else
  local all, members = pdecode(P)
  if pn == 0 and m == nil then members = nil end
  if m ~= nil and not members then
    members = {}
    for j = 1, pn do members[j] = 0 end
  end
  local j = pn
  while j >= 1 and all[j] > ca do
    all[j + 1] = all[j]
    if members then members[j + 1] = members[j] end
    j = j - 1
  end
  all[j + 1] = ca
  if members then members[j + 1] = m or 0 end
  P = pencode(all, members, pn + 1)
end
dirty = true
