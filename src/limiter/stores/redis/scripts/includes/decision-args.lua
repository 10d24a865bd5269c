--[[
decision-args (a block of check-batch.lua's decision loop): one decision's keys and arguments.
ARGV per decision, 1 to 5 values: h = 16 x (rule set number, 1-based) + 8 x (has deferUntil)
+ 4 x (has countAt) + 2 x (has member) + (has now), negated for a peek (whose bit 4, never a
countAt, asks it to ban when hit: LimiterStore.banIfHit); then the member if flagged, now if
flagged, countAt if flagged, deferUntil if flagged.
Without now the decision uses Redis TIME, read once per call.

Defines: kl, kb, kc, ks, kp (log, ban, counters, scheduled, packed keys), peek, banning, set,
  member ('' when none), deferUntil (a check's, or nil), t and tText (the decision time), ca and caText (the count time: countAt
  when later than t, else t), scheduled (S, or nil), n, L (the set's longest window), P (the
  packed log, or false), memberNumber. Advances p.
  Returns { -1 } from the script on a malformed argument.
Expects: d, K, p, sets, scheduledEnds, packedLogs, serverTime.
]]
local kl, kb, kc, ks, kp = K[5 * d - 4], K[5 * d - 3], K[5 * d - 2], K[5 * d - 1], K[5 * d]
local h = tonumber(ARGV[p])
p = p + 1
local peek = h < 0
if peek then h = -h end
local banning = peek and h % 8 >= 4
local set = sets[floor(h / 16)]
if not set then return { -1 } end
local member = ''
if h % 4 >= 2 then
  member = ARGV[p]
  p = p + 1
end
local t, tText
if h % 2 == 1 then
  tText = ARGV[p]
  t = tonumber(tText)
  p = p + 1
else
  t, tText = serverTime()
end
local ca, caText = t, tText
if h % 8 >= 4 and not peek then
  local v = tonumber(ARGV[p])
  if not v then return { -1 } end
  if v > t then ca, caText = v, ARGV[p] end
  p = p + 1
end
local deferUntil
if h % 16 >= 8 and not peek then
  deferUntil = tonumber(ARGV[p])
  if not deferUntil then return { -1 } end
  p = p + 1
end
local scheduled = scheduledEnds[ks]
local n = set.n
local L = set.longest
local P = packedLogs[kp]
local memberNumber = tonumber(member)
