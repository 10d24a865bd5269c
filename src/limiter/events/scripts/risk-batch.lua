--[[
risk-batch: applies the event-rule operations of one batch (checks and events issued in the same
turn of the event loop), all of one Redis Cluster slot. Semantics: src/limiter/events/types.ts and
each kind's module, src/limiter/events/kinds/.

KEYS: per op, in order, as its piece says: window 2 (includes/window.lua), last-n 1
  (includes/last-n.lua), distinct 1, or 2 above the exact range (includes/distinct.lua), claim 1
  (includes/claim.lua), seen 2 (includes/seen.lua), a check's header none.
ARGV[1] = now in ms, or '' for Redis TIME; ARGV[2] = number of ops (reply rows); then per op its
  letter and arguments: 'w' window, 'n' last-n, 'd' and 'h' distinct, 'c' claim, 's' seen (each
  in its piece), or a check's header:
  'g', ops, vetoed (0/1), mask: the next `ops` ops are one check; mask has a '1' per op whose
  firing vetoes it. Its window ops record after all its ops, only when vetoed is 0 and no masked
  op fired; so a denied check writes no window. Its own reply row is {0, 0, 0}.
Returns: per op fired (0/1; 2 a window's ban in force), count, retryAfterMs, flat (3 numbers an op);
  {-1} for malformed arguments.
Each op's piece is a block spliced into the loop below (a function call would cost ~700
instructions per op: see check-batch.lua); what pieces share is defined once above it.
]]
-- Numbers handed to redis.call are printed with %.17g, which costs more than a small command:
-- times, sizes and TTLs go in as strings (ARGV as sent, or printed once with %d).
local fmt, floor = string.format, math.floor
local sunpack, sbyte, schar = struct.unpack, string.byte, string.char
local band, bor = bit.band, bit.bor
local spack = struct.pack
local nowText = ARGV[1]
local now = tonumber(nowText)
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  nowText = fmt('%d', now)
end
local ops = tonumber(ARGV[2])
if not ops then return {-1} end
--- @include "includes/window-log"
--- @include "includes/seen-filter"
-- The reply, flat: 3 numbers per op (one table, not one per op).
local out = {}
local o = 0
-- ARGV index of the current op's letter, KEYS index of its first key.
local a = 3
local k = 1
-- The check being applied: its last op's index, its mask, whether it is vetoed, its window writes.
local checkEnd, checkFirst, mask, vetoed, writes = 0, 0, '', false, {}
for i = 1, ops do
  local kind = ARGV[a]
  if kind == 'g' then
    local n = tonumber(ARGV[a + 1])
    if not n then return {-1} end
    checkFirst, checkEnd, vetoed, mask, writes = i + 1, i + n, ARGV[a + 2] == '1', ARGV[a + 3], {}
    a = a + 4
    out[o + 1], out[o + 2], out[o + 3] = 0, 0, 0; o = o + 3
  elseif kind == 'w' then
    --- @include "includes/window"
  elseif kind == 'n' then
    --- @include "includes/last-n"
  elseif kind == 'd' or kind == 'h' then
    --- @include "includes/distinct"
  elseif kind == 'c' then
    --- @include "includes/claim"
  elseif kind == 's' then
    --- @include "includes/seen"
  else
    return {-1}
  end
  if i <= checkEnd and i >= checkFirst then
    if out[o - 2] >= 1 and mask:sub(i - checkFirst + 1, i - checkFirst + 1) == '1' then vetoed = true end
    if i == checkEnd then
      if not vetoed then
        for _, x in ipairs(writes) do writeWindow(x[1], x[2], x[3], x[4], x[5]) end
      end
      writes = {}
    end
  end
end
return out
