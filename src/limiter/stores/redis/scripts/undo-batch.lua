--[[
undo-batch: take back admitted attempts (a later admission step rejected them), many subjects in
one call (the undos of one turn of the event loop, of one hash slot), each as if sent alone, in order.

KEYS: 4 per undo: log (sorted set), counters (hash), scheduled (string), packed log (string); all of
one subject (the packed log, when it exists, is the log: includes/packed-log.lua). Batched per node
(includes/call-keys.lua): one key that routes the call, ARGV[1] = k, ARGV[2 .. k + 1] the keys,
then the ARGV below.
ARGV: [1] minTtlMs (floor of a TTL written), [2] number of undos; then per undo: member (the
      request id's 32-bit member, '' when the attempt was checked without an id), at (the
      admission's Decision.at, epoch ms), n, then n x (algorithm, windowMs, limit, banMs) as in
      check-batch.lua.
Returns: per undo 1 when the counter effects were applied, 0 when a member was given and is not in
  the log (never admitted with that id, trimmed, or already undone: a no-op, so undo can be retried
  safely); {-1} on malformed arguments (nothing is undone after the malformed one); {-3} when,
  batched per node, a key is not on this node (nothing is undone).

With a member the entry is removed and a = min(its score, at): the score is the attempt's count
time, later than its decision time `at` for a scheduled attempt, whose counters were written at
`at`. Without one a = at and the log is not touched: anonymous entries cannot be told apart, and
the caller vouches that it undoes an anonymous admission at `at`, at most once.
Counter effects for an attempt admitted at a (includes/counters.lua, undoCounter): the
fixed-window count of window floor(a / w) is decremented if still stored and > 0; the
sliding-counter bucket floor(a / b) likewise; the token bucket's tat becomes max(tat - T, a) if one
is stored. Rules that share a counter were counted once and are undone once.
A packed log loses the entry in place and keeps its TTL (set by every check-batch write that adds
an entry, so it never rested on the oldest entry).
TTLs: a removed entry may have been the log's oldest, which the TTL argument of check-batch.lua
(includes/log-write.lua) leans on, so after removing one the log's TTL is reset to max(2 x the longest window, minTtlMs), or to
S - at + 2 x the longest window when the scheduled key holds S > at (at <= the present, so this
keeps the log at least until S + 2L, as check-batch.lua does);
counters' TTLs are left alone (an undo adds no field that must outlive them).
]]

local floor, ceil, fmt, max = math.floor, math.ceil, string.format, math.max
local spack, sunpack, sbyte, ssub, sfind = struct.pack, struct.unpack, string.byte, string.sub, string.find

--- @include "includes/packed-log"
--- @include "includes/counters"
--- @include "includes/call-keys"
if base > 0 then
  -- Every subject's slot is touched before anything is written (one command per slot: a command
  -- may not mix slots), so a stale slot map changes nothing.
  for u = 4, base - 1, 4 do
    if type(redis.pcall('EXISTS', K[u])) ~= 'number' then return { -3 } end
  end
end
local minTtl, count = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
if not (minTtl and count) then return { -1 } end

-- One undo; p is the ARGV index of its n (its rules follow). Returns 1, 0 or -1 as above.
local function undo(kl, kc, ks, kp, member, at, p)
  local n = tonumber(ARGV[p])
  if not (at and n) then return -1 end
  p = p + 1
  local a = at
  local removed = false
  if member ~= '' then
    local packed = redis.call('GET', kp)
    if packed then
      local w, mw, E, pbase = pinfo(packed)
      if mw ~= 4 then return 0 end
      local j = pfind(packed, w, E, spack('>i4', tonumber(member)))
      if not j then return 0 end
      local start = H + 1 + (j - 1) * E
      local score = sunpack(TF[w], packed, start) + pbase
      if score < a then a = score end
      redis.call('SET', kp, ssub(packed, 1, start - 1) .. ssub(packed, start + E), 'KEEPTTL')
    else
      local score = tonumber(redis.call('ZSCORE', kl, member))
      if not score then return 0 end
      if score < a then a = score end
      redis.call('ZREM', kl, member)
      removed = true
    end
  end

  local seen = {}
  local longest = 0
  for _ = 1, n do
    local alg, w, lim = tonumber(ARGV[p]), tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2])
    if not (alg and w and lim) then return -1 end
    p = p + 4
    if w > longest then longest = w end
    undoCounter(kc, alg, w, lim, a, seen)
  end
  if removed then
    local ttl = max(2 * longest, minTtl)
    local scheduled = tonumber(redis.call('GET', ks))
    if scheduled and scheduled > at then ttl = max(scheduled - at + 2 * longest, ttl) end
    redis.call('PEXPIRE', kl, fmt('%d', ttl))
  end
  return 1
end

local results = {}
local p = base + 3
for u = 1, count do
  local q = p + 2
  local n = tonumber(ARGV[q])
  if not n then return { -1 } end
  local result = undo(K[4 * u - 3], K[4 * u - 2], K[4 * u - 1], K[4 * u], ARGV[p], tonumber(ARGV[p + 1]), q)
  if result < 0 then return { -1 } end
  results[u] = result
  p = q + 1 + 4 * n
end
return results
