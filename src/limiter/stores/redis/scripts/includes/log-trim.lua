--[[
log-trim (a block of check-batch.lua's decision loop, past a ban's check): which encoding holds
the subject's sliding log, moving it when needed, then step 3: the trim to the set's longest
window L. The packed one when it exists (and packing is on: packedMax > 0; with packing off a
packed log found moves into the sorted set); else the sorted set when it holds entries (a log too
long to pack, or written by an earlier release: moved into a packed log once its trim leaves at
most packedMax / 2); else a new packed log, written only when this decision records (a peek or a
denial leaves no key behind). A sorted-set removal may raise the log's oldest entry: its TTL is
reset by log-write.lua, whatever the decision.

Defines: horizon (t - L as text, for the sorted set), logTtlDue, trimmed, dirty (the packed log
  changed: to be written), and for a packed log tw (bytes per time), mw, E, pbase, pn (its
  entries), tf, oldest and newest (entry times; nil when empty). Sets P (and packedLogs[kp]) when the encoding changes.
Expects: P, kl, kp, t, L, packedMax, packedLogs, fmt, ssub, sunpack, and the definitions of
  packed-log.lua and sorted-set-log.lua.
]]
local horizon
if not P or packedMax == 0 then horizon = fmt('%d', t - L) end
local logTtlDue, trimmed, dirty = false, false, false
if P and packedMax == 0 then
  toSortedSet(kl, P, nil, nil, t)
  redis.call('DEL', kp)
  P, packedLogs[kp], logTtlDue = false, false, true
elseif not P and packedMax > 0 then
  local size = redis.call('ZCARD', kl)
  if size == 0 then
    P = EMPTY
  else
    local removed = redis.call('ZREMRANGEBYSCORE', kl, '-inf', horizon)
    trimmed, logTtlDue = true, removed > 0
    if size - removed <= packedMax / 2 then
      local entries = redis.call('ZRANGE', kl, 0, -1, 'WITHSCORES')
      local times, members, ne = {}, {}, #entries / 2
      for j = 1, ne do
        members[j] = tonumber(entries[2 * j - 1]) or 0
        times[j] = tonumber(entries[2 * j])
      end
      redis.call('DEL', kl)
      P, dirty, logTtlDue = pencode(times, members, ne), true, false
    end
  end
end

local tw, mw, E, pbase, pn, tf, oldest, newest
if P then
  tw, mw, E, pbase, pn = pinfo(P)
  tf = TF[tw]
  if pn > 0 and sunpack(tf, P, H + 1) + pbase <= t - L then
    local cut = pcount(P, tf, E, pn, t - L - pbase)
    P = ssub(P, 1, H) .. ssub(P, H + 1 + cut * E)
    pn, dirty = pn - cut, true
  end
  if pn > 0 then
    oldest = sunpack(tf, P, H + 1) + pbase
    newest = sunpack(tf, P, H + 1 + (pn - 1) * E) + pbase
  end
elseif not trimmed then
  logTtlDue = redis.call('ZREMRANGEBYSCORE', kl, '-inf', horizon) > 0
end
