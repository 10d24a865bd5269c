--[[
packed-log: the sliding log as one string, while it holds at most packedMax entries (read with the
call's MGET and written with one SET with its TTL, so an admitting decision of a sliding-log set
makes one redis.call of its own).
Bytes: [1] f = w + 8 x (has members), w = bytes per time (1 to 7); [2..8] base, epoch ms, 7 bytes
big-endian; then the entries, ascending by time, E = w + mw bytes each: time - base in w bytes
big-endian, then with members (mw = 4) the request id's member as a signed 32-bit big-endian
integer (0 for an anonymous entry of a log that has ids). w is the fewest bytes that hold
(newest - base): 2 within 65 s, 3 within 4.6 h, 4 within 49 days; an entry that does not fit
(older than base, too far after it, the first member of an anonymous log) rewrites the log with
base = its oldest entry (what a trim leaves as base stays valid).
Counting a window is two binary searches with struct.unpack (none when the oldest and newest
entries bound it); the trim is one string.sub; a request id is found with a plain string.find
kept to member offsets; an admission appends (or splices, when out of order).

Defines: H (header bytes), EMPTY (a log of no entries), TF[w] and TMF[w] (struct formats of a
  time, of a time and member), SPAN[w] (256^w), and
  pinfo(s) -> w, mw, E, base, n;
  pcount(s, tf, E, n, x) -> entries with time - base <= x (binary search);
  pdecode(s) -> times (ascending), members (nil without), n;
  pencode(times, members, n) -> the packed log;
  pfind(s, w, E, mb) -> index of the entry whose member packs to mb, or nil.
Expects: floor, spack, sunpack, sbyte, sfind.
]]
-- An entry j is at H + 1 + (j - 1) * E.
local H = 8
local EMPTY = spack('>BI7', 1, 0)
-- Built once: turning w into a string formats a double, ~700 instructions each time.
local TF = { '>I1', '>I2', '>I3', '>I4', '>I5', '>I6', '>I7' }
local TMF = { '>I1i4', '>I2i4', '>I3i4', '>I4i4', '>I5i4', '>I6i4', '>I7i4' }
local SPAN = { 256, 65536, 16777216, 4294967296, 1099511627776, 281474976710656, 72057594037927936 }
local function pinfo(s)
  local f = sbyte(s, 1)
  local w, mw = f % 8, 0
  if f >= 8 then mw = 4 end
  return w, mw, w + mw, sunpack('>I7', s, 2), (#s - H) / (w + mw)
end
local function pcount(s, tf, E, n, x)
  local lo, hi = 0, n
  while lo < hi do
    local mid = floor((lo + hi + 1) / 2)
    if sunpack(tf, s, H + 1 + (mid - 1) * E) <= x then lo = mid else hi = mid - 1 end
  end
  return lo
end
local function pdecode(s)
  local w, mw, E, base, n = pinfo(s)
  local tf = TF[w]
  local times, members = {}, nil
  if mw == 4 then
    members = {}
    tf = TMF[w]
    for j = 1, n do
      local v, m = sunpack(tf, s, H + 1 + (j - 1) * E)
      times[j], members[j] = v + base, m
    end
  else
    for j = 1, n do times[j] = sunpack(tf, s, H + 1 + (j - 1) * E) + base end
  end
  return times, members, n
end
local function pencode(times, members, n)
  if n == 0 then return EMPTY end
  local base = times[1]
  local span = times[n] - base
  local w = 1
  while w < 7 and span >= SPAN[w] do w = w + 1 end
  local parts = {}
  if members then
    parts[1] = spack('>BI7', w + 8, base)
    local tf = TMF[w]
    for j = 1, n do parts[j + 1] = spack(tf, times[j] - base, members[j]) end
  else
    parts[1] = spack('>BI7', w, base)
    local tf = TF[w]
    for j = 1, n do parts[j + 1] = spack(tf, times[j] - base) end
  end
  return table.concat(parts)
end
local function pfind(s, w, E, mb)
  local first = H + 1 + w
  local pos = first
  while true do
    pos = sfind(s, mb, pos, true)
    if not pos then return nil end
    local off = pos - first
    if off % E == 0 then return off / E + 1 end
    pos = pos + 1
  end
end
