--[[
call-args (a block at the top level of check-batch.lua): the call's own arguments before the
decisions: minTtlMs, packedMax and the rule sets, parsed once per call (decisions reference a set
by number). Per set, each rule's counter field (counters.lua) is named once; a rule owns its field
when no earlier rule of the set counts alike (an admission updates a field once).

Defines: minTtl, packedMax, sets, p (ARGV index of the first decision), decisions (their number).
  A set: n; per rule i alg[i], w[i], lim[i], ban[i], field[i] (counter rules), own[i]; longest
  (L, the longest window), logRule (index of the longest sliding-log rule, 0: none), bucket (has
  a token bucket), logTtl and ctrTtlText (TTL texts, counters.lua, log-write.lua).
  Returns { -1 } from the script on a malformed argument.
Expects: K, base (call-keys.lua), floor, fmt, max, counterField (counters.lua).
]]
local minTtl = tonumber(ARGV[base + 1])
local packedMax = tonumber(ARGV[base + 2])
local setCount = tonumber(ARGV[base + 3])
if not minTtl or not packedMax or not setCount then return { -1 } end
local p = base + 4

local sets = {}
for s = 1, setCount do
  local n = tonumber(ARGV[p])
  if not n then return { -1 } end
  p = p + 1
  local set = { n = n, alg = {}, w = {}, lim = {}, ban = {}, field = {}, own = {}, longest = 0, logRule = 0, ctrTtl = 0, bucket = false }
  local seen = {}
  for i = 1, n do
    local a, w, lim, ban = tonumber(ARGV[p]), tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2]), tonumber(ARGV[p + 3])
    if not (a and w and lim and ban) then return { -1 } end
    p = p + 4
    set.alg[i], set.w[i], set.lim[i], set.ban[i] = a, w, lim, ban
    if w > set.longest then set.longest = w end
    local field, span
    if a == 1 then
      if set.logRule == 0 or w > set.w[set.logRule] then set.logRule = i end
    else
      field, span = counterField(a, w, lim)
      if not field then return { -1 } end
      if a == 4 then set.bucket = true end
    end
    if field then
      set.field[i] = field
      if not seen[field] then
        seen[field] = true
        set.own[i] = true
      end
      if span > set.ctrTtl then set.ctrTtl = span end
    end
  end
  set.logTtl = fmt('%d', max(2 * set.longest, minTtl))
  set.ctrTtlText = fmt('%d', max(set.ctrTtl, minTtl))
  sets[s] = set
end

local decisions = #K / 5
if decisions ~= floor(decisions) or #ARGV < p - 1 + decisions then return { -1 } end
