--[[
log-write (a block of check-batch.lua's decision loop, after the verdict): writes a changed packed
log, or sets the sorted set's TTL when due.
TTLs (cleanup only: decisions never depend on them). They assume decision times follow the Redis
clock (the default; callers passing `now` from another clock raise minTtlMs). With D a TTL below,
setting it at time s makes the key expire at s + D, so expiry never moves earlier (D is fixed per
rule set, s only grows). Every TTL is at least minTtlMs.
- packed log: set with every SET, which happens on every decision that records or trims: 2L, or
  S - t + 2L while S > t, so an entry added at t lives until >= t + L (later writes only move the
  expiry later, on the Redis clock).
- sorted set: set only when needed, because a PEXPIRE on every admission cost ~6k instructions of
  an admitting decision's ~52k (callgrind, one sliding-log rule, batches of 100): D = 2L, or
  S - t + 2L when S > t, set when the log may have been empty before this record (the longest
  sliding-log rule counted 0, or the set has none), when this record is scheduled (a > t), and
  whenever the trim (or an undo) removed entries, on any path. The scheduled term keeps every
  entry, all <= S, until >= S + L; S only grows while it is stored. Claim: an entry added at t
  lives until >= t + L.
  Invariant K: while the log is non-empty its expiry E >= o + 2L, o = its oldest entry time.
  Setting E = s + 2L keeps K (every entry is <= s); adding entries does not change o (they are
  newer); removing entries can raise o, and every removal resets E. Now add an entry at t: if the
  log may have been empty, E = t + 2L; otherwise the trim at t removed nothing and left entries,
  all > t - L, so o > t - L and by K, E >= o + 2L > t + L. E never moving earlier, the entry lives
  until >= t + L, so it is never lost while a window can count it. An idle log vanishes within 2L
  of its last write.
- scheduled: D = S - t + 2L, set when S is raised (past S + 2L no check can have a < S).
- ban: its remaining time, set with the ban. Counters: counters.lua.

Defines: nothing; sets packedLogs[kp] to the log written.
Expects: P, dirty, logTtlDue (log-trim.lua), kp, kl, set, scheduled, t, L, minTtl, packedLogs,
  fmt, max.
]]
if P then
  if dirty then
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
