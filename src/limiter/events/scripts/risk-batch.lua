--[[
risk-batch: applies the event-rule operations of one batch (checks and events issued in the same
turn of the event loop), all of one Redis Cluster slot. Semantics: src/limiter/events/types.ts.

KEYS: per op, in order: last-n 1 (list), distinct 1 (sorted set) or 2 (HyperLogLogs), claim 1, window 2
      (packed log, ban end), check header none, seen 2 (filter of the current
      generation, of the previous one; the same key twice without a window). A filter's key names
      its size, so a rule resized starts a new filter instead of reading the old with other positions;
      a filter larger than one segment (hashing.ts) is one key per segment, these two its value's.
ARGV[1] = now in ms, or '' for Redis TIME; ARGV[2] = number of ops; then per op:
  'n', n, m, outcome, push ('' = none), ttlMs
  'd', windowMs, limit, member (48-bit value hash), record (0/1)
  'h', limit, member, record (0/1), ttlMs, retryAfterMs: distinct above the exact range, keys
       this generation's HyperLogLog and the last one's (PFCOUNT of both, PFADD to this one)
  'c', ttlMs: claims the key (SET NX PX, on the Redis clock); fires when it was claimed already;
       ttlMs 0 releases it (DEL)
  'w', windowMs, limit, member (4 bytes, '' = anonymous), record (0/1), banMs (0 = none): a
       sliding-log window, exact, in the limiter's order: a member found in the window is a retry
       (not fired, no write); a ban in force answers fired = 2 (banned; count 0 when record: a
       check makes no count); else counts the admissions in (now - w, now] and fires at limit,
       then with banMs > 0 and record sets the ban key to now + banMs (PX banMs) at once, inside a
       check too (the log holds only admissions that stand: a breach of them bans); else records
       now when record (inside a check: at its end, and only when the check is not vetoed)
  'g', ops, vetoed (0/1), mask: a check: the next `ops` ops are one check; mask has a '1' per op
       whose firing vetoes it. Its window ops record after all its ops, only when vetoed is 0 and
       no masked op fired; so a denied check writes no window. Its own reply row is {0, 0, 0}.
  's', bytes (the key's size: the filter's, or its segment's), record (0/1), ttlMs (0 = none),
       offset (byte offset of the value's 64-byte block in the key), positions (k bit positions in the block, 2 bytes each, big-endian)
Returns: per op fired (0/1; 2 a window's ban in force), count, retryAfterMs, flat (3 numbers an op);
{-1} for malformed arguments.
State: window a string of 12-byte entries ascending by time (a double, struct '>d', then the
member; 4 zero bytes when anonymous), trimmed to the window at each write and SET with PX = w
(plus how far its newest entry lies ahead, when callers' clocks differ), so read and written whole
(RISK_LIMITS.storeWindowLimit bounds it); last-n LPUSH + LTRIM to n (TTL refreshed by a push); distinct ZSET member → latest time,
trimmed to the window when it records (TTL = window); seen a blocked Bloom filter in a string (hashing.ts): a
check reads the value's 64-byte block with one GETRANGE, a new value writes it with one SETRANGE.
]]
-- Numbers handed to redis.call are printed with %.17g, which costs more than a small command:
-- times, sizes and TTLs go in as strings (ARGV as sent, or printed once with %d).
local fmt, floor = string.format, math.floor
local sunpack, sbyte, schar = struct.unpack, string.byte, string.char
local band, bor = bit.band, bit.bor
local BIT = {[0] = 1, 2, 4, 8, 16, 32, 64, 128}
local ZERO_BLOCK = string.rep('\0', 64)
local nowText = ARGV[1]
local now = tonumber(nowText)
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  nowText = fmt('%d', now)
end
local ops = tonumber(ARGV[2])
if not ops then return {-1} end
local spack = struct.pack
-- A distinct rule of at most this limit reads its window with one ZRANGEBYSCORE (and trims only
-- when it writes); a larger one trims, then asks ZSCORE and ZCARD (no reply of `limit` members).
local SMALL_DISTINCT = 64
local ANON = string.rep('\0', 4)
local out = {}
-- The reply, flat: 3 numbers per op (one table, not one per op).
local o = 0
local a = 3
local k = 1
-- The check being applied: its last op's index, its mask, whether it is vetoed, its window writes.
local checkEnd, checkFirst, mask, vetoed, writes = 0, 0, '', false, {}
local function writeWindow(key, log, first, w, member)
  -- Keep the entries still in the window (first and after), insert now in time order.
  local entry = spack('>d', now) .. (member == '' and ANON or member)
  local kept = log:sub(12 * (first - 1) + 1)
  local at = #kept
  while at > 0 and sunpack('>d', kept, at - 11) > now do at = at - 12 end
  local value = kept:sub(1, at) .. entry .. kept:sub(at + 1)
  local newest = sunpack('>d', value, #value - 11)
  redis.call('SET', key, value, 'PX', fmt('%d', w + math.max(0, newest - now)))
end
-- A seen op's bytes (1-based in its block) and bit masks, reused by every seen op.
local byteAt, maskOf = {}, {}
-- A missing filter, or a block past its end, reads as '' (zeros: not seen).
local function has(block, hashes)
  if #block < 64 then return false end
  for j = 1, hashes do
    if band(sbyte(block, byteAt[j]), maskOf[j]) == 0 then return false end
  end
  return true
end
for i = 1, ops do
  local kind = ARGV[a]
  if kind == 'g' then
    local n = tonumber(ARGV[a + 1])
    if not n then return {-1} end
    checkFirst, checkEnd, vetoed, mask, writes = i + 1, i + n, ARGV[a + 2] == '1', ARGV[a + 3], {}
    a = a + 4
    out[o + 1], out[o + 2], out[o + 3] = 0, 0, 0; o = o + 3
  elseif kind == 'w' then
    local key, banKey = KEYS[k], KEYS[k + 1]
    local wText, limit, member, record, ban = ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4] == '1', tonumber(ARGV[a + 5])
    local w = tonumber(wText)
    if not (w and limit and ban) then return {-1} end
    k = k + 2
    a = a + 6
    -- One call reads the log and the ban end (one hash tag, so one slot).
    local got = redis.call('MGET', key, banKey)
    local log = got[1] or ''
    local banEnd = tonumber(got[2])
    local entries = #log / 12
    -- first: the first entry inside the window (later than now - w); entries are ascending.
    local cut = now - w
    local first = entries + 1
    for j = 1, entries do
      if sunpack('>d', log, 12 * j - 11) > cut then first = j break end
    end
    local c, repeated = 0, false
    for j = first, entries do
      local o = 12 * j - 11
      if sunpack('>d', log, o) <= now then
        c = c + 1
        if member ~= '' and log:sub(o + 8, o + 11) == member then repeated = true end
      end
    end
    if repeated then
      out[o + 1], out[o + 2], out[o + 3] = 0, c, 0; o = o + 3
    elseif banEnd and banEnd > now then
      out[o + 1], out[o + 2], out[o + 3] = 2, record and 0 or c, banEnd - now; o = o + 3
    elseif c >= limit then
      -- Admitted again once c - limit + 1 entries have left: the (c - limit + 1)-th counted one.
      local seenCount, retry = 0, 0
      for j = first, entries do
        local t = sunpack('>d', log, 12 * j - 11)
        if t <= now then
          seenCount = seenCount + 1
          if seenCount == c - limit + 1 then retry = t + w - now break end
        end
      end
      if ban > 0 then
        if ban > retry then retry = ban end
        if record then redis.call('SET', banKey, fmt('%d', now + ban), 'PX', fmt('%d', ban)) end
      end
      out[o + 1], out[o + 2], out[o + 3] = 1, c, retry; o = o + 3
    else
      out[o + 1], out[o + 2], out[o + 3] = 0, c, 0; o = o + 3
      if record then
        if i <= checkEnd then writes[#writes + 1] = {key, log, first, w, member}
        else writeWindow(key, log, first, w, member) end
      end
    end
  elseif kind == 'n' then
    local key = KEYS[k]
    local n, m, outcome, push, ttl = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
    if not (n and m) then return {-1} end
    k = k + 1
    a = a + 6
    local last = fmt('%d', n - 1)
    if push ~= '' then
      redis.call('LPUSH', key, push)
      redis.call('LTRIM', key, '0', last)
      redis.call('PEXPIRE', key, ttl)
    end
    local list = redis.call('LRANGE', key, '0', last)
    local c = 0
    for _, v in ipairs(list) do
      if v == outcome then c = c + 1 end
    end
    out[o + 1], out[o + 2], out[o + 3] = c >= m and 1 or 0, c, 0; o = o + 3
  elseif kind == 'd' then
    local key = KEYS[k]
    local wText, limit, member, record = ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4] == '1'
    local w = tonumber(wText)
    if not (w and limit) then return {-1} end
    k = k + 1
    a = a + 5
    local cut = fmt('%d', now - w)
    local present, c, oldest
    if limit <= SMALL_DISTINCT then
      -- One read: the window's members and times (at most limit of them: a write trims first).
      -- Entries that left the window stay until the next write or the TTL (one window after it).
      local inWindow = redis.call('ZRANGEBYSCORE', key, '(' .. cut, '+inf', 'WITHSCORES')
      c = #inWindow / 2
      present = false
      for j = 1, #inWindow, 2 do
        if inWindow[j] == member then present = true break end
      end
      oldest = inWindow[2]
    else
      redis.call('ZREMRANGEBYSCORE', key, '-inf', cut)
      present = redis.call('ZSCORE', key, member)
      c = redis.call('ZCARD', key)
    end
    local fired = (not present) and c >= limit
    local retry = 0
    if fired then
      if not oldest then oldest = redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')[2] end
      retry = math.max(0, tonumber(oldest) + w - now)
    elseif record then
      if limit <= SMALL_DISTINCT then redis.call('ZREMRANGEBYSCORE', key, '-inf', cut) end
      redis.call('ZADD', key, 'GT', nowText, member)
      redis.call('PEXPIRE', key, wText)
    end
    out[o + 1], out[o + 2], out[o + 3] = fired and 1 or 0, c, retry; o = o + 3
  elseif kind == 'h' then
    local current, previous = KEYS[k], KEYS[k + 1]
    local limit, member, record, ttl, retry = tonumber(ARGV[a + 1]), ARGV[a + 2], ARGV[a + 3] == '1', ARGV[a + 4], tonumber(ARGV[a + 5])
    if not (limit and retry) then return {-1} end
    k = k + 2
    a = a + 6
    -- One key while the last generation is gone: PFCOUNT of one key uses its cached estimate.
    local c
    if redis.call('EXISTS', previous) == 1 then c = redis.call('PFCOUNT', current, previous) else c = redis.call('PFCOUNT', current) end
    local fired = c >= limit
    if record and not fired then
      redis.call('PFADD', current, member)
      redis.call('PEXPIRE', current, ttl)
    end
    out[o + 1], out[o + 2], out[o + 3] = fired and 1 or 0, c, fired and retry or 0; o = o + 3
  elseif kind == 'c' then
    local claimed
    if ARGV[a + 1] == '0' then
      claimed = redis.call('DEL', KEYS[k]) == 1
    else
      claimed = not redis.call('SET', KEYS[k], '1', 'NX', 'PX', ARGV[a + 1])
    end
    k = k + 1
    a = a + 2
    out[o + 1], out[o + 2], out[o + 3] = claimed and 1 or 0, claimed and 1 or 0, 0; o = o + 3
  elseif kind == 's' then
    local current, previous = KEYS[k], KEYS[k + 1]
    local bytes, record, ttl, offset, packed = tonumber(ARGV[a + 1]), ARGV[a + 2] == '1', ARGV[a + 3], tonumber(ARGV[a + 4]), ARGV[a + 5]
    if not (bytes and offset) then return {-1} end
    k = k + 2
    a = a + 6
    -- The value's block (64 bytes), and its bits in it: byte floor(p / 8) + 1, bit p % 8.
    local from, to = fmt('%d', offset), fmt('%d', offset + 63)
    local hashes = #packed / 2
    for j = 1, hashes do
      local p = sunpack('>I2', packed, 2 * j - 1)
      byteAt[j] = floor(p / 8) + 1
      maskOf[j] = BIT[p % 8]
    end
    local block = redis.call('GETRANGE', current, from, to)
    local inCurrent = has(block, hashes)
    local seen = inCurrent or (previous ~= current and has(redis.call('GETRANGE', previous, from, to), hashes))
    if record and not inCurrent then
      if #block < 64 then
        -- A new key (a filter, or one segment of a larger one) is sized in full at its first write.
        redis.call('SETRANGE', current, fmt('%d', bytes - 1), '\0')
        block = ZERO_BLOCK
      end
      local b = {sbyte(block, 1, 64)}
      for j = 1, hashes do
        b[byteAt[j]] = bor(b[byteAt[j]], maskOf[j])
      end
      redis.call('SETRANGE', current, from, schar(unpack(b)))
      if ttl ~= '0' then redis.call('PEXPIRE', current, ttl) end
    end
    out[o + 1], out[o + 2], out[o + 3] = seen and 0 or 1, seen and 1 or 0, 0; o = o + 3
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
