--[[
undo-batch: take back admitted attempts (a later admission step rejected them), many subjects in
one call (the undos of one turn of the event loop, of one hash slot), each as if sent alone, in order.

KEYS: 4 per undo: log (sorted set), counters (hash), scheduled (string), packed log (string); all of
one subject (see check-batch.lua: the packed log, when it exists, is the log). Batched per node (as
in check-batch.lua): one key that routes the call, ARGV[1] = k, ARGV[2 .. k + 1] the keys, then
the ARGV below.
ARGV: [1] minTtlMs (floor of a TTL written), [2] number of undos; then per undo: member (the
      request id's 32-bit member, '' when the attempt was checked without an id), at (the
      admission's Decision.at, epoch ms), n, then n x (algorithm, windowMs, limit, banMs) as in
      check-batch.lua.
Returns: per undo 1 when the counter effects were applied, 0 when a member was given and is not in
  the log (never admitted with that id, trimmed, or already undone: a no-op, so undo can be retried
  safely); {-1} on malformed arguments (nothing is undone after the malformed one); {-3} when,
  batched per node, a key is not on this node (nothing is undone).

With a member the entry is removed and a = min(its score, at): the score is the attempt's count
time, later than its decision time `at` for a scheduled attempt, whose counters were written at `at`. Without one a = at and the log is not touched: anonymous entries cannot be told apart,
and the caller vouches that it undoes an anonymous admission at `at`, at most once.
Counter effects for an attempt admitted at a: the fixed-window count of window floor(a / w) is
decremented if still stored and > 0; the sliding-counter bucket floor(a / b) likewise; the token
bucket's tat becomes max(tat - T, a) if one is stored. Rules that share a counter (as named in
check-batch.lua) were counted once and are undone once.
A packed log loses the entry in place and keeps its TTL (set by every check-batch write that adds
an entry, so it never rested on the oldest entry).
TTLs: a removed entry may have been the log's oldest, which check-batch.lua's TTL argument leans
on, so after removing one the log's TTL is reset to max(2 x the longest window, minTtlMs), or to
S - at + 2 x the longest window when the scheduled key holds S > at (at <= the present, so this
keeps the log at least until S + 2L, as check-batch.lua does);
counters' TTLs are left alone (an undo adds no field that must outlive them).
]]

local floor, ceil, fmt, max = math.floor, math.ceil, string.format, math.max
local K, base = KEYS, 0
if #KEYS == 1 then
  local k = tonumber(ARGV[1])
  if not k then return { -1 } end
  K, base = { unpack(ARGV, 2, k + 1) }, k + 1
  -- Every subject's slot is touched before anything is written (one command per slot: a command
  -- may not mix slots), so a stale slot map changes nothing.
  for u = 4, k, 4 do
    if type(redis.pcall('EXISTS', K[u])) ~= 'number' then return { -3 } end
  end
end
local minTtl, count = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
if not (minTtl and count) then return { -1 } end

-- One undo; p is the ARGV index of its n (its rules follow). Returns 1, 0 or -1 as above.
local function undo(kl, counters, ks, kp, member, at, p)
  local n = tonumber(ARGV[p])
  if not (at and n) then return -1 end
  p = p + 1
  local a = at
  local removed = false
  if member ~= '' then
    local packed = redis.call('GET', kp)
    if packed then
      -- Packed format in check-batch.lua: header byte (w + 8 with members), 7-byte base, entries.
      local f = string.byte(packed, 1)
      if f < 8 then return 0 end
      local w = f % 8
      local E = w + 4
      local mb = struct.pack('>i4', tonumber(member))
      local first = 9 + w
      local pos = first
      while true do
        pos = string.find(packed, mb, pos, true)
        if not pos then return 0 end
        if (pos - first) % E == 0 then break end
        pos = pos + 1
      end
      local start = pos - w
      local score = struct.unpack('>I' .. w, packed, start) + struct.unpack('>I7', packed, 2)
      if score < a then a = score end
      redis.call('SET', kp, string.sub(packed, 1, start - 1) .. string.sub(packed, start + E), 'KEEPTTL')
    else
      local score = tonumber(redis.call('ZSCORE', kl, member))
      if not score then return 0 end
      if score < a then a = score end
      redis.call('ZREM', kl, member)
      removed = true
    end
  end

  local kc = counters
  local seen = {}
  local longest = 0
  for _ = 1, n do
    local alg, w, lim = tonumber(ARGV[p]), tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2])
    if not (alg and w and lim) then return -1 end
    p = p + 4
    if w > longest then longest = w end
    local field
    if alg == 2 then
      local b = ceil(w / 10)
      field = 's' .. fmt('%d', b) .. ':' .. fmt('%d', floor(a / b))
    elseif alg == 3 then
      field = 'f' .. fmt('%d', w) .. ':' .. fmt('%d', floor(a / w))
    elseif alg == 4 then
      field = 't' .. fmt('%d', w) .. ':' .. fmt('%d', lim)
    end
    if field and not seen[field] then
      seen[field] = true
      local v = tonumber(redis.call('HGET', kc, field))
      if v then
        if alg == 4 then
          local tat = v - w / lim
          if tat < a then tat = a end
          redis.call('HSET', kc, field, fmt('%.17g', tat))
        elseif v > 0 then
          redis.call('HINCRBY', kc, field, -1)
        end
      end
    end
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
