--[[
check-batch: decide a batch of checks and peeks, one after the other, atomically.
Each decision sees the writes of the ones before it, so a batch means exactly what the same
decisions sent one by one would mean (semantics: src/limiter/types.ts, steps 1-5). All keys of
one call are on one node: of one hash slot, or, on a cluster batched per node, of several slots of
one node, run as the `#!lua flags=allow-cross-slot-keys` variant (lua-script.ts) with the keys in
ARGV (a cluster refuses declared keys of several slots).

KEYS: 5 per decision, in decision order:
  log (sorted set: score = time ms, member = an integer: 13 bits when anonymous in a small log,
  else 32), ban (string: ban end ms),
  counters (hash: fixed-window, sliding-counter and token-bucket state),
  scheduled (string: S, the latest count time admitted later than its decision time; see below),
  packed (string: the packed log, below).
  Batched per node: KEYS is one key that routes the call (not read), ARGV[1] = k and
  ARGV[2 .. k + 1] are the keys above, and the ARGV below follow them.
ARGV (positional, no tables per decision):
  [1] minTtlMs: floor of every TTL written (0: TTLs are exactly the spans below)
  [2] packedMax: most entries a packed log holds (0: sorted sets only; a packed log found is moved
      into the sorted set)
  [3] R: number of distinct rule sets in this call; then R rule sets, each:
      n, then n x (algorithm, windowMs, limit, banMs)
      algorithm: 1 sliding-log, 2 sliding-counter, 3 fixed-window, 4 token-bucket
  then per decision, 1 to 4 values: h = 8 x (rule set number, 1-based) + 4 x (has countAt)
      + 2 x (has member) + (has now), negated for a peek (whose bit 4, never a countAt, asks it to
      ban when hit: LimiterStore.banIfHit); then the member (the request id's 32-bit
      member) if flagged, then now (epoch ms) if flagged, then countAt (epoch ms) if flagged; without
      now the decision uses Redis TIME, read once per call. (One value in the common case: every
      argument costs Redis parsing and a Lua string.)
Returns: one flat array; per decision: code (0 OK, 1 BANNED, 2 RATE_LIMITED, 3 OK as a repeated
  request id), hit rule (0-based, -1 none), retryAfterMs, at, then n counts; a check answered
  BANNED has no counts (a ban in force decides without counting; a peek still counts).
  On failure a single negative code (see script-errors.ts): -1 malformed arguments,
  -2 no free log member found, -3 a key is not on this node (the caller's slot map is stale; the
  MGET is the call's first access to every subject's slot, so nothing was written).

The log, in one of two encodings (at most one of them exists but in a fleet mixing releases):
- packed, while it holds at most packedMax entries: one string, read with the call's MGET and
  written with one SET (with its TTL), so an admitting decision of a sliding-log set makes one
  redis.call of its own. Bytes: [1] f = w + 8 x (has members), w = bytes per time (1 to 7);
  [2..8] base, epoch ms, 7 bytes big-endian; then the entries, ascending by time, E = w + mw bytes
  each: time - base in w bytes big-endian, then with members (mw = 4) the request id's member as a
  signed 32-bit big-endian integer (0 for an anonymous entry of a log that has ids). w is the
  fewest bytes that hold (newest - base): 2 within 65 s, 3 within 4.6 h, 4 within 49 days; an
  entry that does not fit (older than base, too far after it, the first member of an anonymous
  log) rewrites the log with base = its oldest entry (what a trim leaves as base stays valid).
  Counting a window is two binary searches with struct.unpack (none when the oldest and newest
  entries bound it); the trim is one string.sub; a request id is found with a plain string.find
  kept to member offsets; an admission appends (or splices, when out of order).
- sorted set, beyond packedMax entries (and as releases before 2026-12-01 wrote every log): the
  packed entries move into it with one ZADD (anonymous entries and repeats of member 0 get free
  32-bit members); a decision finding no packed log asks ZCARD, and a sorted set that a trim
  leaves with at most packedMax / 2 entries moves back into a packed log (hysteresis: a log at
  the cap does not move at every admission). A release before 2026-12-01 never reads the packed
  key: see docs/upgrading.md.

Counters hash fields (state is named by what it counts, so rules counting alike share it and an
admission updates it once):
  f<w>:<k> = admitted in fixed window k, f<w> = newest window index written
  s<b>:<k> = admitted in sliding-counter bucket k (b = bucket ms), s<b> = newest bucket index written
  t<w>:<limit> = token-bucket theoretical arrival time (a double, %.17g)
Bans and scheduled keys of the whole call are read with one MGET (batched per node, one per
subject: a command may not mix slots even in a cross-slot script); what this call writes overrides
what it read.

Scheduled sends (types.ts, step 4): a check with countAt a > t counts and logs the attempt at a
(counters still at t) and raises S. Sliding-log rules count n(a) = ZCOUNT (a - w, a] while S <= a
(the common path: the MGET already said so); when S > a the log may hold entries later than a, so
the entries in (a - L', a + L') (L' = longest sliding-log window) are read once with ZRANGEBYSCORE
and every rule takes the maximum of n(u) over u = a and the entry times in (a, a + w).
A refusal of an attempt with a > t bans nothing: its breach lies at a, not in the present.

TTLs (cleanup only: decisions never depend on them). A packed log's is set with every SET, which
happens on every decision that records or trims: 2L, or S - t + 2L while S > t, so an entry added
at t lives until >= t + L (later writes only move the expiry later, on the Redis clock). For the
sorted set and the other keys they are set only when needed, because a PEXPIRE
on every admission cost ~6k instructions of an admitting decision's ~52k (callgrind, one
sliding-log rule, batches of 100). They assume decision times follow
the Redis clock (the default; callers passing `now` from another clock raise minTtlMs). With D a
TTL below, setting it at time s makes the key expire at s + D, so expiry never moves earlier
(D is fixed per rule set, s only grows). Every TTL is at least minTtlMs.
- ban: its remaining time, set with the ban.
- log: D = 2L (L = longest window of the set), or S - t + 2L when S > t, set when the log may have
  been empty before this record (the longest sliding-log rule counted 0, or the set has none), when
  this record is scheduled (a > t), and whenever the trim (or an undo) removed entries, on any path.
  The scheduled term keeps every entry, all <= S, until >= S + L; S only grows while it is stored. Claim: an entry added at t lives until >= t + L.
  Invariant K: while the log is non-empty its expiry E >= o + 2L, o = its oldest entry time.
  Setting E = s + 2L keeps K (every entry is <= s); adding entries does not change o (they are
  newer); removing entries can raise o, and every removal resets E. Now add an entry at t: if the
  log may have been empty, E = t + 2L; otherwise the trim at t removed nothing and left entries,
  all > t - L, so o > t - L and by K, E >= o + 2L > t + L. E never moving earlier, the entry lives
  until >= t + L, so it is never lost while a window can count it. An idle log vanishes within 2L
  of its last write.
- scheduled: D = S - t + 2L, set when S is raised (past S + 2L no check can have a < S).
- counters: D = the longest span a field still matters after its window or bucket began
  (fixed-window: w, sliding-counter: 11 buckets, token-bucket: w), set when an admission creates a
  fixed-window or sliding-counter field (HINCRBY answered 1: it was created at t >= the start of
  its window, which matters until start + span <= t + D), and on every admission of a set with a
  token-bucket rule (its tat <= t + w must outlive t + w).

Cost: each redis.call costs ~6-9k instructions, about what a whole command costs a client, so
with a sorted-set log the common path (one sliding-log rule, no id) makes four: ZCARD,
ZREMRANGEBYSCORE, ZCOUNT, ZADD (plus PEXPIRE when the log was empty or the trim removed entries),
and one ZCOUNT more per sliding-log rule; with a packed log it makes one, the SET, whatever the
number of sliding-log rules. A check of a banned subject makes
none (one ZSCORE with an id): its ban end came with the call's MGET, and a ban decides alone
(the seed's O(1) rejection), so an attack on banned recipients costs little more than parsing.
]]

local floor, ceil, fmt, max = math.floor, math.ceil, string.format, math.max
local spack, sunpack, sbyte, ssub, sfind = struct.pack, struct.unpack, string.byte, string.sub, string.find

local K, base = KEYS, 0
if #KEYS == 1 then
  local k = tonumber(ARGV[1])
  if not k then return { -1 } end
  K, base = { unpack(ARGV, 2, k + 1) }, k + 1
end
local minTtl = tonumber(ARGV[base + 1])
local packedMax = tonumber(ARGV[base + 2])
local setCount = tonumber(ARGV[base + 3])
if not minTtl or not packedMax or not setCount then return { -1 } end
local p = base + 4

-- Rule sets: parsed once per call; decisions reference them by number.
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
    elseif a == 2 then
      local b = ceil(w / 10)
      field, span = 's' .. fmt('%d', b), 11 * b
    elseif a == 3 then
      field, span = 'f' .. fmt('%d', w), w
    elseif a == 4 then
      field, span = 't' .. fmt('%d', w) .. ':' .. fmt('%d', lim), w
      set.bucket = true
    else
      return { -1 }
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

-- Ban ends, S, and the packed logs (a sorted-set log reads as nil), read before anything is
-- written: one MGET for the call; batched per node, one per subject (a command may not mix slots),
-- so a node missing one of the slots refuses the batch (-3) having written nothing.
local banEnds, scheduledEnds, packedLogs = {}, {}, {}
local function remember(kb, ks, kp, ban, scheduled, packed)
  if ban then banEnds[kb] = tonumber(ban) end
  if scheduled then scheduledEnds[ks] = tonumber(scheduled) end
  packedLogs[kp] = packed or false
end
if base == 0 then
  local readKeys = {}
  for d = 1, decisions do
    readKeys[3 * d - 2] = K[5 * d - 3]
    readKeys[3 * d - 1] = K[5 * d - 1]
    readKeys[3 * d] = K[5 * d]
  end
  local values = redis.call('MGET', unpack(readKeys))
  for d = 1, decisions do
    remember(readKeys[3 * d - 2], readKeys[3 * d - 1], readKeys[3 * d], values[3 * d - 2], values[3 * d - 1], values[3 * d])
  end
else
  for d = 1, decisions do
    local kb, ks, kp = K[5 * d - 3], K[5 * d - 1], K[5 * d]
    if packedLogs[kp] == nil then
      local values = redis.pcall('MGET', kb, ks, kp)
      if values.err then return { -3 } end
      remember(kb, ks, kp, values[1], values[2], values[3])
    end
  end
end

-- Packed logs (format in the header). H = header bytes; an entry is E = w + mw bytes at
-- H + 1 + (j - 1) * E: its time - base in w bytes big-endian, then its member (mw = 4) or nothing.
local H = 8
local EMPTY = spack('>BI7', 1, 0)
-- Per time width w: struct formats of a time and of a time and member, and 256^w. (Built once:
-- turning w into a string formats a double, ~700 instructions each time.)
local TF = { '>I1', '>I2', '>I3', '>I4', '>I5', '>I6', '>I7' }
local TMF = { '>I1i4', '>I2i4', '>I3i4', '>I4i4', '>I5i4', '>I6i4', '>I7i4' }
local SPAN = { 256, 65536, 16777216, 4294967296, 1099511627776, 281474976710656, 72057594037927936 }
local function pinfo(s)
  local f = sbyte(s, 1)
  local w, mw = f % 8, 0
  if f >= 8 then mw = 4 end
  return w, mw, w + mw, sunpack('>I7', s, 2), (#s - H) / (w + mw)
end
-- Entries of s with time <= x (binary search; tf = the time format, x relative to base).
local function pcount(s, tf, E, n, x)
  local lo, hi = 0, n
  while lo < hi do
    local mid = floor((lo + hi + 1) / 2)
    if sunpack(tf, s, H + 1 + (mid - 1) * E) <= x then lo = mid else hi = mid - 1 end
  end
  return lo
end
-- Every entry: times (ascending) and members (nil when the log has none).
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
-- The packed log of n entries (times ascending; members nil, or one per entry, 0 for anonymous).
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
-- Index of the entry whose member packs to mb, or nil (a plain find, kept to member offsets).
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
-- Moves a packed log (plus one entry at ca with member m, when ca is given) into the sorted set kl
-- (which must be absent): anonymous entries, and repeats of a member, get free 32-bit members.
local function toSortedSet(kl, s, ca, m, seed)
  local times, members, n = pdecode(s)
  local args, used, na = {}, {}, 0
  local function add(time, member)
    if member == nil or used[member] then
      member = ((seed % 4294967296) * 1009 + na) % 4294967296 - 2147483648
      while used[member] do member = (member + 2147483649) % 4294967296 - 2147483648 end
    end
    used[member] = true
    na = na + 2
    args[na - 1], args[na] = fmt('%d', time), fmt('%d', member)
  end
  for j = 1, n do
    local member
    if members and members[j] ~= 0 then member = members[j] end
    add(times[j], member)
  end
  if ca then add(ca, m) end
  -- In ZADDs of at most 1000 entries: unpack puts every argument on the Lua stack (~8000 slots).
  for first = 1, na, 2000 do
    redis.call('ZADD', kl, unpack(args, first, math.min(first + 1999, na)))
  end
end

-- The sliding-log count of an attempt at ca when entries may be later than it: the most entries in
-- a window (u - w, u] over u = ca and the entry times in (ca, ca + w) (`times` ascending, covering
-- (ca - w, ca + w)); and the largest retry over the windows holding >= lim (-1: none).
local function windowMax(times, nt, ca, w, lim)
  local low = 1
  while low <= nt and times[low] <= ca - w do low = low + 1 end
  local high = low
  while high <= nt and times[high] <= ca do high = high + 1 end
  local u, best, retry = ca, 0, -1
  while true do
    local c = high - low
    if c > best then best = c end
    if c >= lim then
      local r = times[high - lim] + w - u
      if r > retry then retry = r end
    end
    if high > nt or times[high] >= ca + w then break end
    u = times[high]
    while high <= nt and times[high] == u do high = high + 1 end
    while times[low] <= u - w do low = low + 1 end
  end
  return best, retry
end

-- Numbers handed to redis.call are printed with %.17g, which costs more than the command:
-- times and TTLs therefore go in as strings, printed once with %d (or taken from ARGV as sent).
local redisNow, redisNowText
local function serverTime()
  if not redisNow then
    local tm = redis.call('TIME')
    redisNow = tonumber(tm[1]) * 1000 + floor(tonumber(tm[2]) / 1000)
    redisNowText = fmt('%d', redisNow)
  end
  return redisNow, redisNowText
end

local out, o = {}, 0
local counts = {}
-- Per rule of the current decision: the token bucket's x = max(tat, t).
local arrival = {}

for d = 1, decisions do
  local kl, kb, kc, ks, kp = K[5 * d - 4], K[5 * d - 3], K[5 * d - 2], K[5 * d - 1], K[5 * d]
  local h = tonumber(ARGV[p])
  p = p + 1
  local peek = h < 0
  if peek then h = -h end
  local banning = peek and h % 8 >= 4
  local set = sets[floor(h / 8)]
  if not set then return { -1 } end
  local member = ''
  if h % 4 >= 2 then
    member = ARGV[p]
    p = p + 1
  end
  local t, tText
  if h % 2 == 1 then
    tText = ARGV[p]
    t = tonumber(tText)
    p = p + 1
  else
    t, tText = serverTime()
  end
  -- The attempt's count time: countAt when later than t.
  local ca, caText = t, tText
  if h % 8 >= 4 and not peek then
    local v = tonumber(ARGV[p])
    if not v then return { -1 } end
    if v > t then ca, caText = v, ARGV[p] end
    p = p + 1
  end
  local scheduled = scheduledEnds[ks]
  local n = set.n
  local L = set.longest
  local P = packedLogs[kp]
  local memberNumber = tonumber(member)

  -- Step 1 before the trim: an entry the trim at t would keep (time > t - L) is in the log.
  local repeated = false
  if member ~= '' then
    if P then
      local w, mw, E, base = pinfo(P)
      if mw == 4 then
        local j = pfind(P, w, E, spack('>i4', memberNumber))
        if j then repeated = sunpack(TF[w], P, H + 1 + (j - 1) * E) + base > t - L end
      end
    else
      local score = redis.call('ZSCORE', kl, member)
      if score then repeated = tonumber(score) > t - L end
    end
  end
  local banEnd = banEnds[kb]
  if not peek and not repeated and banEnd and banEnd > t then
    -- Step 2: a ban in force decides alone, in O(1): no trim, no count, no counts in the reply.
    o = o + 1; out[o] = 1
    o = o + 1; out[o] = -1
    o = o + 1; out[o] = banEnd - t
    o = o + 1; out[o] = t
  else
    local horizon
    if not P or packedMax == 0 then horizon = fmt('%d', t - L) end
    -- Which log: the packed one when it exists (and packing is on); else the sorted set when it
    -- holds entries (a log too long to pack, or written by an earlier release: moved into a packed
    -- log once its trim leaves at most packedMax / 2); else a new packed log.
    local logTtlDue, trimmed, dirty = false, false, false
    if P and packedMax == 0 then
      toSortedSet(kl, P, nil, nil, t)
      redis.call('DEL', kp)
      P, packedLogs[kp], logTtlDue = false, false, true
    elseif not P and packedMax > 0 then
      local size = redis.call('ZCARD', kl)
      if size == 0 then
        -- Written only when this decision records (a peek or a denial leaves no key behind).
        P = EMPTY
      else
        local removed = redis.call('ZREMRANGEBYSCORE', kl, '-inf', horizon)
        trimmed, logTtlDue = true, removed > 0
        if size - removed <= packedMax / 2 then
          local entries = redis.call('ZRANGE', kl, 0, -1, 'WITHSCORES')
          local times, members, ne = {}, {}, #entries / 2
          for j = 1, ne do
            members[j] = tonumber(entries[2 * j - 1]) or 0
            times[j] = tonumber(entries[2 * j])
          end
          redis.call('DEL', kl)
          P, dirty, logTtlDue = pencode(times, members, ne), true, false
        end
      end
    end

    -- Step 3: trim the log to the longest window of the set. A sorted-set removal may raise the
    -- log's oldest entry: its TTL is reset below, whatever the decision.
    local w, mw, E, base, pn, tf, oldest, newest
    if P then
      w, mw, E, base, pn = pinfo(P)
      tf = TF[w]
      if pn > 0 and sunpack(tf, P, H + 1) + base <= t - L then
        local cut = pcount(P, tf, E, pn, t - L - base)
        P = ssub(P, 1, H) .. ssub(P, H + 1 + cut * E)
        pn, dirty = pn - cut, true
      end
      if pn > 0 then
        oldest = sunpack(tf, P, H + 1) + base
        newest = sunpack(tf, P, H + 1 + (pn - 1) * E) + base
      end
    elseif not trimmed then
      logTtlDue = redis.call('ZREMRANGEBYSCORE', kl, '-inf', horizon) > 0
    end

    -- Count every rule (the formulas of types.ts, same operations in the same order): sliding-log
    -- rules for an attempt at ca, the others at t.
    local hitRule, retry, maxBan = -1, 0, 0
    local times, nt
    if scheduled and scheduled > ca and set.logRule > 0 then
      local Ls = set.w[set.logRule]
      times, nt = {}, 0
      if P then
        local all, _, na = pdecode(P)
        for j = 1, na do
          local v = all[j]
          if v > ca - Ls and v < ca + Ls then
            nt = nt + 1
            times[nt] = v
          end
        end
      else
        local entries = redis.call('ZRANGEBYSCORE', kl, '(' .. fmt('%d', ca - Ls), '(' .. fmt('%d', ca + Ls), 'WITHSCORES')
        nt = #entries / 2
        for j = 1, nt do times[j] = tonumber(entries[2 * j]) end
      end
    end
    for i = 1, n do
      local a, w, lim = set.alg[i], set.w[i], set.lim[i]
      local c, r = 0, -1
      if a == 1 then
        if times then
          c, r = windowMax(times, nt, ca, w, lim)
        elseif P then
          -- Entries lo + 1 .. hi are in (ca - w, ca]; the first and last often bound the window.
          if pn > 0 then
            local hi, lo = pn, 0
            if newest > ca then hi = pcount(P, tf, E, pn, ca - base) end
            if oldest <= ca - w then lo = pcount(P, tf, E, pn, ca - w - base) end
            c = hi - lo
            if c >= lim then r = sunpack(tf, P, H + 1 + (lo + c - lim) * E) + base + w - ca end
          end
        else
          local lower
          if w == L and ca == t then lower = '(' .. horizon else lower = '(' .. fmt('%d', ca - w) end
          c = redis.call('ZCOUNT', kl, lower, caText)
          if c >= lim then
            local entry = redis.call('ZRANGEBYSCORE', kl, lower, caText, 'WITHSCORES', 'LIMIT', c - lim, 1)
            r = tonumber(entry[2]) + w - ca
          end
        end
      elseif a == 2 then
        local b = ceil(w / 10)
        local k = floor(t / b)
        local m = t - k * b
        local f = set.field[i] .. ':'
        local v = redis.call('HMGET', kc, f .. fmt('%d', k - 10), f .. fmt('%d', k - 9), f .. fmt('%d', k - 8),
          f .. fmt('%d', k - 7), f .. fmt('%d', k - 6), f .. fmt('%d', k - 5), f .. fmt('%d', k - 4),
          f .. fmt('%d', k - 3), f .. fmt('%d', k - 2), f .. fmt('%d', k - 1), f .. fmt('%d', k))
        local S = 0
        for j = 2, 11 do
          S = S + (tonumber(v[j]) or 0)
        end
        local x = S * b + (tonumber(v[1]) or 0) * (b - m)
        c = floor(x / b)
        if x >= lim * b then r = b - m end
      elseif a == 3 then
        local k = floor(t / w)
        c = tonumber(redis.call('HGET', kc, set.field[i] .. ':' .. fmt('%d', k))) or 0
        if c >= lim then r = (k + 1) * w - t end
      else
        local T = w / lim
        local x = tonumber(redis.call('HGET', kc, set.field[i])) or t
        if t > x then x = t end
        arrival[i] = x
        c = ceil((x - t) / T - 1e-9)
        if x + T - t > w then r = ceil(x + T - w - t) end
      end
      counts[i] = c
      if r >= 0 then
        if hitRule < 0 then hitRule = i - 1 end
        if r > retry then retry = r end
        if set.ban[i] > maxBan then maxBan = set.ban[i] end
      end
    end

    local code = 0
    if repeated then
      -- Step 1: the same send retried.
      code, hitRule, retry = 3, -1, 0
    elseif banEnd and banEnd > t then
      -- Only a peek gets here: it reports the counts of a banned subject.
      code, hitRule, retry = 1, -1, banEnd - t
    elseif hitRule >= 0 then
      code = 2
      -- An attempt counted later than its decision time (ca > t) breaches nothing yet: no ban.
      if maxBan > 0 and ca == t then
        if maxBan > retry then retry = maxBan end
        if banning or not peek then
          redis.call('SET', kb, fmt('%d', t + maxBan), 'PX', fmt('%d', max(maxBan, minTtl)))
          banEnds[kb] = t + maxBan
        end
      end
    elseif not peek then
      -- Step 5: record under every rule (state shared by equal rules is written once).
      if set.logRule > 0 or member ~= '' then
        if P and pn + 1 > packedMax then
          -- Too long to pack: the entries and this one move into the sorted set.
          toSortedSet(kl, P, ca, memberNumber, t)
          redis.call('DEL', kp)
          P, packedLogs[kp], dirty, logTtlDue = false, false, false, true
        elseif P then
          local m = memberNumber
          if pn > 0 and ca >= base and ca - base < SPAN[w] and (m == nil or mw == 4) then
            local entry
            if mw == 4 then entry = spack(TMF[w], ca - base, m or 0) else entry = spack(tf, ca - base) end
            if ca >= newest then
              P = P .. entry
            else
              local at = H + 1 + pcount(P, tf, E, pn, ca - base) * E
              P = ssub(P, 1, at - 1) .. entry .. ssub(P, at)
            end
          else
            -- A new base, time width or member column: written afresh (at most a few times per log).
            local all, members = pdecode(P)
            if pn == 0 and m == nil then members = nil end
            if m ~= nil and not members then
              members = {}
              for j = 1, pn do members[j] = 0 end
            end
            local j = pn
            while j >= 1 and all[j] > ca do
              all[j + 1] = all[j]
              if members then members[j + 1] = members[j] end
              j = j - 1
            end
            all[j + 1] = ca
            if members then members[j + 1] = m or 0 end
            P = pencode(all, members, pn + 1)
          end
          dirty = true
        else
          if member == '' then
            -- An anonymous attempt: a member unique in the set. A listpack stores an integer-looking
            -- member as an integer: in 2 bytes (+1 back-length) when it fits 13 bits, so small logs take
            -- members from [-4096, 4096); larger ones, or a crowded small range, use 32 bits. Time and
            -- count spread the choice, ZADD NX probes on a collision.
            local seed = 0
            if set.logRule > 0 then seed = counts[set.logRule] end
            local span = 8192
            if seed >= 1024 then span = 4294967296 end
            local cand = ((t % span) * 1009 + seed) % span
            local probes = 0
            while redis.call('ZADD', kl, 'NX', caText, fmt('%d', cand - span / 2)) == 0 do
              probes = probes + 1
              if probes > 100000 then return { -2 } end
              if probes == 64 and span == 8192 then
                span = 4294967296
                cand = ((t % span) * 1009 + seed) % span
              else
                cand = (cand + 1) % span
              end
            end
          else
            redis.call('ZADD', kl, caText, member)
          end
          -- The log may have been empty (a count of 0 under its longest sliding-log rule, or no such rule).
          if set.logRule == 0 or counts[set.logRule] == 0 then logTtlDue = true end
        end
      end
      if ca > t then
        logTtlDue = true
        if not scheduled or ca > scheduled then
          scheduled = ca
          scheduledEnds[ks] = ca
          redis.call('SET', ks, caText, 'PX', fmt('%d', max(ca - t + 2 * L, minTtl)))
        end
      end
      if set.ctrTtl > 0 then
        local ctrTtlDue = set.bucket
        for i = 1, n do
          if set.own[i] then
            local a, field = set.alg[i], set.field[i]
            if a == 4 then
              redis.call('HSET', kc, field, fmt('%.17g', arrival[i] + set.w[i] / set.lim[i]))
            else
              local k
              if a == 2 then k = floor(t / ceil(set.w[i] / 10)) else k = floor(t / set.w[i]) end
              if redis.call('HINCRBY', kc, field .. ':' .. fmt('%d', k), 1) == 1 then
                -- A new window or bucket: drop the ones that no longer count, remember the newest.
                ctrTtlDue = true
                local last = tonumber(redis.call('HGET', kc, field))
                if not last or last < k then
                  if last then
                    local keep = 0
                    if a == 2 then keep = 10 end
                    local j = last - keep
                    while j <= last and j <= k - keep - 1 do
                      redis.call('HDEL', kc, field .. ':' .. fmt('%d', j))
                      j = j + 1
                    end
                  end
                  redis.call('HSET', kc, field, fmt('%d', k))
                end
              end
            end
          end
        end
        if ctrTtlDue then redis.call('PEXPIRE', kc, set.ctrTtlText) end
      end
    end
    if P then
      if dirty then
        -- Every write of a packed log sets its TTL (SET without it would drop it): 2L, or S - t + 2L.
        local ttl = set.logTtl
        if scheduled and scheduled > t then ttl = fmt('%d', max(scheduled - t + 2 * L, minTtl)) end
        redis.call('SET', kp, P, 'PX', ttl)
        packedLogs[kp] = P
      end
    elseif logTtlDue then
      if scheduled and scheduled > t then
        redis.call('PEXPIRE', kl, fmt('%d', max(scheduled - t + 2 * L, minTtl)))
      else
        redis.call('PEXPIRE', kl, set.logTtl)
      end
    end

    o = o + 1; out[o] = code
    o = o + 1; out[o] = hitRule
    o = o + 1; out[o] = retry
    o = o + 1; out[o] = t
    for i = 1, n do
      o = o + 1; out[o] = counts[i]
    end
  end
end

return out
