--[[
sorted-set-record (a block of check-batch.lua's record step, a sorted-set log): the admission at
ca. An anonymous attempt gets a member unique in the set: a listpack stores an integer-looking
member as an integer, in 2 bytes (+1 back-length) when it fits 13 bits, so small logs take
members from [-4096, 4096); larger ones, or a crowded small range, use 32 bits. Time and count
spread the choice, ZADD NX probes on a collision.

Defines: sets logTtlDue when the log may have been empty before (a count of 0 under its longest
  sliding-log rule, or no such rule).
  Returns { -2 } from the script when no free member is found.
Expects: kl, member, ca, caText, t, set, counts, fmt.
]]
if member == '' then
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
if set.logRule == 0 or counts[set.logRule] == 0 then logTtlDue = true end
