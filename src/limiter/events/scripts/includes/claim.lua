--[[
claim (a block of risk-batch.lua's op loop, op 'c'; src/limiter/events/kinds/claim.ts): KEYS: the
claim. ARGV: 'c', ttlMs. Claims the key (SET NX PX, on the Redis clock); fires when it was claimed
already; ttlMs 0 releases it (DEL), firing when it was held.

Defines: appends the op's row to out; advances k and a.
Expects: k, a, out, o.
]]
local claimed
if ARGV[a + 1] == '0' then
  claimed = redis.call('DEL', KEYS[k]) == 1
else
  claimed = not redis.call('SET', KEYS[k], '1', 'NX', 'PX', ARGV[a + 1])
end
k = k + 1
a = a + 2
out[o + 1], out[o + 2], out[o + 3] = claimed and 1 or 0, claimed and 1 or 0, 0; o = o + 3
