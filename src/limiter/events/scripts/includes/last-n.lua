--[[
last-n (a block of risk-batch.lua's op loop, op 'n'; src/limiter/events/kinds/last-n.ts): KEYS: the
list of outcomes, newest first. ARGV: 'n', n, m, outcome, push ('' = none), ttlMs. Pushes the
outcome (LPUSH, LTRIM to n, TTL refreshed), then counts the last n equal to `outcome`: fires at m.

Defines: appends the op's row to out; advances k and a.
  Returns {-1} from the script on a malformed argument.
Expects: k, a, out, o, fmt.
]]
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
