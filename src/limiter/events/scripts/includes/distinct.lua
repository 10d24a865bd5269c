--[[
distinct (a block of risk-batch.lua's op loop, ops 'd', 'h'; src/limiter/events/kinds/distinct.ts).
'd': KEYS: the sorted set, member (a 48-bit value hash) -> latest time, trimmed to the window when
  it records (TTL = window). ARGV: 'd', windowMs, limit, member, record (0/1). Fires when the
  member is not in the window and the window holds limit members already; retryAfterMs: until the
  oldest leaves. A limit of at most SMALL_DISTINCT reads its window with one ZRANGEBYSCORE (and
  trims only when it writes); a larger one trims, then asks ZSCORE and ZCARD (no reply of `limit`
  members).
'h': above the exact range. KEYS: this generation's HyperLogLog and the last one's. ARGV: 'h',
  limit, member, record (0/1), ttlMs, retryAfterMs. Counts the union of both (PFCOUNT), fires at
  limit (whatever the member: an HLL cannot tell a known one), else adds to this generation.

Defines: appends the op's row to out; advances k and a.
  Returns {-1} from the script on a malformed argument.
Expects: kind, k, a, out, o, now, nowText, fmt.
]]
if kind == 'd' then
  local SMALL_DISTINCT = 64
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
else
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
end
