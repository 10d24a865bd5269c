--[[
sorted-set-count (a block of check-batch.lua's count loop, a sliding-log rule, sorted-set log, no
scheduled entries after ca): ZCOUNT (ca - w, ca], and when hit the entry whose leaving admits
again. The longest window at t reuses the trim's horizon.

Defines: sets c and r (retry; -1 not hit).
Expects: kl, horizon (log-trim.lua), ca, caText, t, w, lim, L, fmt.
]]
local lower
if w == L and ca == t then lower = '(' .. horizon else lower = '(' .. fmt('%d', ca - w) end
c = redis.call('ZCOUNT', kl, lower, caText)
if c >= lim then
  local entry = redis.call('ZRANGEBYSCORE', kl, lower, caText, 'WITHSCORES', 'LIMIT', c - lim, 1)
  r = tonumber(entry[2]) + w - ca
end
