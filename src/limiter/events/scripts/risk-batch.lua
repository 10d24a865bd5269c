--[[
risk-batch: applies the event-rule operations of one batch (checks and events issued in the same
turn of the event loop), all of one Redis Cluster slot. Semantics: src/limiter/events/types.ts.

KEYS: per op, in order: last-n 1 (list), distinct 1 (sorted set), seen 2 (filter of the current
      generation, of the previous one; the same key twice without a window). A filter's key names
      its size, so a rule resized starts a new filter instead of reading the old with other positions.
ARGV[1] = now in ms, or '' for Redis TIME; ARGV[2] = number of ops; then per op:
  'n', n, m, outcome, push ('' = none), ttlMs
  'd', windowMs, limit, member (48-bit value hash), record (0/1)
  's', bits, record (0/1), ttlMs (0 = none), hashes k, k bit positions
Returns: per op {fired (0/1), count, retryAfterMs}; {-1} for malformed arguments.
State: last-n LPUSH + LTRIM to n (TTL refreshed by a push); distinct ZSET member → latest time,
trimmed to the window (TTL = window); seen a string bitmap (SETBIT/GETBIT through BITFIELD).
]]
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local ops = tonumber(ARGV[2])
if not ops then return {-1} end
local out = {}
local a = 3
local k = 1
for i = 1, ops do
  local kind = ARGV[a]
  if kind == 'n' then
    local key = KEYS[k]
    local n, m, outcome, push, ttl = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4], tonumber(ARGV[a + 5])
    k = k + 1
    a = a + 6
    if push ~= '' then
      redis.call('LPUSH', key, push)
      redis.call('LTRIM', key, 0, n - 1)
      redis.call('PEXPIRE', key, ttl)
    end
    local list = redis.call('LRANGE', key, 0, n - 1)
    local c = 0
    for _, v in ipairs(list) do
      if v == outcome then c = c + 1 end
    end
    out[i] = {c >= m and 1 or 0, c, 0}
  elseif kind == 'd' then
    local key = KEYS[k]
    local w, limit, member, record = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4] == '1'
    k = k + 1
    a = a + 5
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - w)
    local present = redis.call('ZSCORE', key, member)
    local c = redis.call('ZCARD', key)
    local fired = (not present) and c >= limit
    local retry = 0
    if fired then
      local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
      retry = math.max(0, tonumber(oldest[2]) + w - now)
    elseif record then
      redis.call('ZADD', key, 'GT', now, member)
      redis.call('PEXPIRE', key, w)
    end
    out[i] = {fired and 1 or 0, c, retry}
  elseif kind == 's' then
    local current, previous = KEYS[k], KEYS[k + 1]
    local bits, record, ttl, hashes = tonumber(ARGV[a + 1]), ARGV[a + 2] == '1', tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
    k = k + 2
    local get = {}
    local set = {}
    for j = 1, hashes do
      local p = ARGV[a + 4 + j]
      get[#get + 1] = 'GET'; get[#get + 1] = 'u1'; get[#get + 1] = p
      set[#set + 1] = 'SET'; set[#set + 1] = 'u1'; set[#set + 1] = p; set[#set + 1] = 1
    end
    a = a + 5 + hashes
    local function has(key)
      if redis.call('STRLEN', key) * 8 < bits then return false end
      local got = redis.call('BITFIELD_RO', key, unpack(get))
      for j = 1, #got do
        if got[j] == 0 then return false end
      end
      return true
    end
    local inCurrent = has(current)
    local seen = inCurrent or (previous ~= current and has(previous))
    if record and not inCurrent then
      -- Sized at its first write: a filter shorter than its size reads as "not seen" above.
      if redis.call('STRLEN', current) * 8 < bits then redis.call('SETRANGE', current, math.ceil(bits / 8) - 1, '\0') end
      redis.call('BITFIELD', current, unpack(set))
      if ttl > 0 then redis.call('PEXPIRE', current, ttl) end
    end
    out[i] = {seen and 0 or 1, seen and 1 or 0, 0}
  else
    return {-1}
  end
end
return out
