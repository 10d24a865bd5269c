--[[
repeated-id (a block of check-batch.lua's decision loop): step 1, before the trim: the request id
names a send already in the log (an entry the trim at t would keep: time > t - L), so the
decision is the same send retried (answered OK, not recorded again).

Defines: repeated.
Expects: member, memberNumber, P, kl, t, L, and packed-log.lua's definitions, spack, sunpack.
]]
local repeated = false
if member ~= '' then
  if P then
    local w, mw, E, base = pinfo(P)
    if mw == 4 then
      local j = pfind(P, w, E, spack('>i4', memberNumber))
      if j then repeated = sunpack(TF[w], P, H + 1 + (j - 1) * E) + base > t - L end
    end
  else
    local score = redis.call('ZSCORE', kl, member)
    if score then repeated = tonumber(score) > t - L end
  end
end
