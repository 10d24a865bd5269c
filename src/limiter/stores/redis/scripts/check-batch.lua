--[[
check-batch: decide a batch of checks and peeks, one after the other, atomically.
Each decision sees the writes of the ones before it, so a batch means exactly what the same
decisions sent one by one would mean (semantics: src/limiter/types.ts, steps 1-5). All keys of
one call are on one node: of one hash slot, or, on a cluster batched per node, of several slots of
one node (includes/call-keys.lua).

KEYS: 5 per decision, in decision order:
  log (sorted set: includes/sorted-set-log.lua), ban (string: ban end ms),
  counters (hash: fixed-window, sliding-counter and token-bucket state; includes/counters.lua),
  scheduled (string: S, the latest count time admitted later than its decision time;
  includes/scheduled.lua), packed (string: the packed log, includes/packed-log.lua).
  Batched per node: one key that routes the call, the keys above in ARGV (includes/call-keys.lua).
ARGV (positional, no tables per decision):
  [1] minTtlMs: floor of every TTL written (0: TTLs are exactly the spans of includes/log-write.lua)
  [2] packedMax: most entries a packed log holds (0: sorted sets only; a packed log found is moved
      into the sorted set)
  [3] R: number of distinct rule sets in this call; then R rule sets, each:
      n, then n x (algorithm, windowMs, limit, banMs)
      algorithm: 1 sliding-log, 2 sliding-counter, 3 fixed-window, 4 token-bucket
  then per decision 1 to 5 values, the first h = its rule set and flags (includes/decision-args.lua:
  one value in the common case: every argument costs Redis parsing and a Lua string).
Returns: one flat array; per decision: code (0 OK, 1 BANNED, 2 RATE_LIMITED, 3 OK as a repeated
  request id, 4 OK deferred: recorded at at + retryAfterMs), hit rule (0-based, -1 none),
  retryAfterMs, at, then n counts; a check answered
  BANNED has no counts (a ban in force decides without counting; a peek still counts).
  On failure a single negative code (see script-errors.ts): -1 malformed arguments,
  -2 no free log member found, -3 a key is not on this node (the caller's slot map is stale; the
  MGET is the call's first access to every subject's slot, so nothing was written).

The pieces, in the order a decision meets them: its arguments (decision-args), a repeated
request id (repeated-id), a ban in force (here), the log's encoding and trim (log-trim), the count
of every rule by its algorithm (packed-log-count, sorted-set-count, scheduled,
sliding-counter-count, fixed-window-count, token-bucket-count), the verdict and the ban of a
breach (here), the record (packed-log-record, sorted-set-record, counters-record), the log's write
and TTL (log-write), the reply (here).
What runs per decision or per rule is a block spliced into the loop, not a function: in Redis a
Lua call costs ~700 instructions (a fixed-window decision of 3 rules took 4.5k more as functions;
docs/benchmarks.md). Functions serve what runs once per call or off the common path.

Cost: each redis.call costs ~6-9k instructions, about what a whole command costs a client, so
with a sorted-set log the common path (one sliding-log rule, no id) makes four: ZCARD,
ZREMRANGEBYSCORE, ZCOUNT, ZADD (plus PEXPIRE when the log was empty or the trim removed entries),
and one ZCOUNT more per sliding-log rule; with a packed log it makes one, the SET, whatever the
number of sliding-log rules. A check of a banned subject makes none (one ZSCORE with an id): its
ban end came with the call's MGET, and a ban decides alone (the seed's O(1) rejection), so an
attack on banned recipients costs little more than parsing.
]]

local floor, ceil, fmt, max = math.floor, math.ceil, string.format, math.max
local spack, sunpack, sbyte, ssub, sfind = struct.pack, struct.unpack, string.byte, string.sub, string.find

--- @include "includes/counters"
--- @include "includes/call-keys"
--- @include "includes/call-args"
--- @include "includes/read-state"
--- @include "includes/sorted-set-log"
--- @include "includes/scheduled"
--- @include "includes/server-time"
--- @include "includes/first-admitted"

local out, o = {}, 0
local counts = {}
-- Per rule of the current decision: the token bucket's x = max(tat, t).
local arrival = {}

for d = 1, decisions do
  --- @include "includes/decision-args"
  --- @include "includes/repeated-id"
  local banEnd = banEnds[kb]
  if not peek and not repeated and not deferUntil and banEnd and banEnd > t then
    -- Step 2: a ban in force decides alone, in O(1): no trim, no count, no counts in the reply.
    o = o + 1; out[o] = 1
    o = o + 1; out[o] = -1
    o = o + 1; out[o] = banEnd - t
    o = o + 1; out[o] = t
  else
    --- @include "includes/log-trim"

    -- Count every rule (the formulas of types.ts, same operations in the same order): sliding-log
    -- rules for an attempt at ca, the others at t.
    local hitRule, retry, maxBan, counterHit = -1, 0, 0, false
    local times, nt
    if scheduled and scheduled > ca and set.logRule > 0 then
      times, nt = scheduledTimes(kl, P, ca, set.w[set.logRule])
    end
    for i = 1, n do
      local a, w, lim = set.alg[i], set.w[i], set.lim[i]
      local c, r = 0, -1
      if a == 1 then
        if times then
          c, r = windowMax(times, nt, ca, w, lim)
        elseif P then
          --- @include "includes/packed-log-count"
        else
          --- @include "includes/sorted-set-count"
        end
      elseif a == 2 then
        --- @include "includes/sliding-counter-count"
      elseif a == 3 then
        --- @include "includes/fixed-window-count"
      else
        --- @include "includes/token-bucket-count"
      end
      counts[i] = c
      if r >= 0 then
        if hitRule < 0 then hitRule = i - 1 end
        if r > retry then retry = r end
        if set.ban[i] > maxBan then maxBan = set.ban[i] end
        if a ~= 1 then counterHit = true end
      end
    end

    local code, record = 0, false
    if repeated then
      -- Step 1: the same send retried.
      code, hitRule, retry = 3, -1, 0
    elseif deferUntil and (hitRule >= 0 or (banEnd and banEnd > t)) then
      -- Deferral: recorded at the first count time every rule and the ban admit, never banning.
      local start = ca
      if banEnd and banEnd > start then start = banEnd end
      local u = not counterHit and firstAdmitted(kl, P, set, start)
      if u and u <= deferUntil then
        code, hitRule, retry, record = 4, -1, u - t, true
        ca, caText = u, fmt('%d', u)
      elseif banEnd and banEnd > t then
        code, hitRule, retry = 1, -1, u and u - t or banEnd - t
      else
        code, retry = 2, u and u - t or retry
      end
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
    else
      record = not peek
    end
    if record then
      -- Step 5: record under every rule (state shared by equal rules is written once).
      if set.logRule > 0 or member ~= '' then
        if P and pn + 1 > packedMax then
          -- Too long to pack: the entries and this one move into the sorted set.
          toSortedSet(kl, P, ca, memberNumber, t)
          redis.call('DEL', kp)
          P, packedLogs[kp], dirty, logTtlDue = false, false, false, true
        elseif P then
          --- @include "includes/packed-log-record"
        else
          --- @include "includes/sorted-set-record"
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
        --- @include "includes/counters-record"
      end
    end
    --- @include "includes/log-write"

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
