--[[
  Claims due entries of a partition, shared among its tenants: reads and removes them in one
  atomic step, so two claimers never get the same id. The sharing is core/fair-share.ts's
  `allocate`, step for step (the conformance suite holds the two to the same answers):
  1. each active tenant (due entries, or slots held) may take up to its share of the slots,
     max(1, floor(concurrency * weight / sum of weights)), less what it holds, once that is at
     least ARGV[5] or its whole share;
  2. free slots beyond the shares (once at least ARGV[5] are free) go to anyone with due entries;
  each step transactional lane (0) before bulk (1), tenants by weighted round-robin in id order
  starting after ARGV[6]. Within a queue, entries leave by due time, then id.

  KEYS[1]  the partition's ready set (see add.lua)
  ARGV[1]  the prefix of queue keys (same hash tag as KEYS[1])
  ARGV[2]  now (ms): entries due at or before it are claimed
  ARGV[3]  the most entries to claim (> 0)
  ARGV[4]  the slots (concurrency)
  ARGV[5]  the free slots below which step 2 hands out nothing
  ARGV[6]  the tenant served last ('' for none)
  ARGV[7]  h, then h pairs: tenant id, slots it holds
  then     w, then w pairs: tenant id, weight (tenants not listed weigh 1)

  Returns the claimed message ids.
]]
local ready, prefix, now = KEYS[1], ARGV[1], ARGV[2]
local limit, concurrency, minFree, after = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local at = 7
local held, heldTotal = {}, 0
for _ = 1, tonumber(ARGV[at]) do
  held[ARGV[at + 1]] = tonumber(ARGV[at + 2])
  heldTotal = heldTotal + tonumber(ARGV[at + 2])
  at = at + 2
end
at = at + 1
local weights = {}
for _ = 1, tonumber(ARGV[at]) do
  weights[ARGV[at + 1]] = tonumber(ARGV[at + 2])
  at = at + 2
end
local function weightOf(tenant) return weights[tenant] or 1 end

-- What each queue has due (capped at the limit: more can never be taken).
local left, laneTenants, active = {}, { [0] = {}, [1] = {} }, {}
for _, queue in ipairs(redis.call('ZRANGEBYSCORE', ready, '-inf', now)) do
  local n = redis.call('ZCOUNT', prefix .. queue, '-inf', now)
  if n > 0 then
    local lane, tenant = tonumber(string.sub(queue, 1, 1)), string.sub(queue, 3)
    left[queue] = math.min(n, limit)
    table.insert(laneTenants[lane], tenant)
    active[tenant] = true
  else
    -- Listed as due but nothing is (an entry re-added later than the one it replaced): rescore
    -- it by its real head, or drop it when its set is gone.
    local head = redis.call('ZRANGE', prefix .. queue, 0, 0, 'WITHSCORES')
    if head[2] == nil then redis.call('ZREM', ready, queue) else redis.call('ZADD', ready, head[2], queue) end
  end
end
for tenant in pairs(held) do active[tenant] = true end

local totalWeight = 0
for tenant in pairs(active) do totalWeight = totalWeight + weightOf(tenant) end
local allowance = {}
for tenant in pairs(active) do
  local share = math.max(1, math.floor(concurrency * weightOf(tenant) / totalWeight))
  local owed = math.max(0, share - (held[tenant] or 0))
  -- A small remainder waits like the free slots do (ARGV[5]); a tenant far below its share does not.
  if owed > 0 and owed >= math.min(minFree, share) then allowance[tenant] = owed else allowance[tenant] = 0 end
end
local free = math.max(0, concurrency - heldTotal)
local room = math.min(limit, math.max(0, 2 * concurrency - heldTotal))

local function ring(tenants)
  table.sort(tenants)
  if after == '' then return tenants end
  local start = nil
  for k, tenant in ipairs(tenants) do
    if tenant > after then start = k break end
  end
  if start == nil or start == 1 then return tenants end
  local out = {}
  for k = start, #tenants do out[#out + 1] = tenants[k] end
  for k = 1, start - 1 do out[#out + 1] = tenants[k] end
  return out
end

local function roundRobin(tenants, budget, offer)
  local spent, current = 0, tenants
  while spent < budget and #current > 0 do
    local nextRound = {}
    for _, tenant in ipairs(current) do
      if spent >= budget then break end
      local got = offer(tenant, math.min(weightOf(tenant), budget - spent))
      spent = spent + got
      if got > 0 then nextRound[#nextRound + 1] = tenant end
    end
    current = nextRound
  end
  return spent
end

local takes, takeAt = {}, {}
local function take(queue, n)
  left[queue] = left[queue] - n
  room = room - n
  if takeAt[queue] == nil then
    takes[#takes + 1] = { queue, 0 }
    takeAt[queue] = #takes
  end
  takes[takeAt[queue]][2] = takes[takeAt[queue]][2] + n
end

local byShares = 0
for lane = 0, 1 do
  byShares = byShares + roundRobin(ring(laneTenants[lane]), room, function(tenant, want)
    local queue = lane .. '|' .. tenant
    local n = math.min(want, allowance[tenant] or 0, left[queue] or 0)
    if n > 0 then
      allowance[tenant] = allowance[tenant] - n
      take(queue, n)
    end
    return n
  end)
end
local spare = 0
if free >= minFree then spare = math.min(room, math.max(0, free - byShares)) end
for lane = 0, 1 do
  if spare <= 0 then break end
  spare = spare - roundRobin(ring(laneTenants[lane]), spare, function(tenant, want)
    local queue = lane .. '|' .. tenant
    local n = math.min(want, left[queue] or 0)
    if n > 0 then take(queue, n) end
    return n
  end)
end

local claimed = {}
for _, entry in ipairs(takes) do
  local queue, key = entry[1], prefix .. entry[1]
  local ids = redis.call('ZRANGEBYSCORE', key, '-inf', now, 'LIMIT', 0, entry[2])
  -- ZREM in slices: unpack() of a long list overflows the Lua stack.
  for first = 1, #ids, 1000 do
    redis.call('ZREM', key, unpack(ids, first, math.min(first + 999, #ids)))
  end
  for _, id in ipairs(ids) do claimed[#claimed + 1] = id end
  local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if head[2] == nil then redis.call('ZREM', ready, queue) else redis.call('ZADD', ready, head[2], queue) end
end
return claimed
