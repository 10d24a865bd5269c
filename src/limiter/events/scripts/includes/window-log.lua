--[[
window-log: the packed log of a window op (window.lua): a string of 12-byte entries ascending by
time (a double, struct '>d', then the member: 4 bytes of the request id's digest, 4 zero bytes when
anonymous), trimmed to the window at each write and SET with PX = w (plus how far its newest entry
lies ahead, when callers' clocks differ), so read and written whole (RISK_LIMITS.storeWindowLimit
bounds it).

Defines: ANON (an anonymous entry's member), writeWindow(key, log, first, w, member): writes the
  log keeping its entries from `first` (the first inside the window) with `now` inserted in time
  order.
Expects: now, fmt, spack, sunpack.
]]
local ANON = string.rep('\0', 4)
local function writeWindow(key, log, first, w, member)
  local entry = spack('>d', now) .. (member == '' and ANON or member)
  local kept = log:sub(12 * (first - 1) + 1)
  local at = #kept
  while at > 0 and sunpack('>d', kept, at - 11) > now do at = at - 12 end
  local value = kept:sub(1, at) .. entry .. kept:sub(at + 1)
  local newest = sunpack('>d', value, #value - 11)
  redis.call('SET', key, value, 'PX', fmt('%d', w + math.max(0, newest - now)))
end
