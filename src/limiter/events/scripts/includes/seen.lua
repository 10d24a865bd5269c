--[[
seen (a block of risk-batch.lua's op loop, op 's'; src/limiter/events/kinds/seen.ts): KEYS: the
filter of the current generation, of the previous one (the same key twice without a window). A
filter's key names its size, so a rule resized starts a new filter instead of reading the old with
other positions; a filter larger than one segment (src/limiter/events/hashing.ts) is one key per
segment, these two its value's. ARGV: 's', bytes (the key's size: the filter's, or its segment's),
record (0/1), ttlMs (0 = none), offset (byte offset of the value's 64-byte block in the key),
positions (k bit positions in the block, 2 bytes each, big-endian). A check reads the value's block
with one GETRANGE (two with a window, when not in the current filter); a new value writes it with
one SETRANGE. Fires when not seen.

Defines: appends the op's row to out; advances k and a.
  Returns {-1} from the script on a malformed argument.
Expects: k, a, out, o, byteAt, maskOf, has, BIT, ZERO_BLOCK (seen-filter.lua), fmt, floor,
  sunpack, sbyte, schar, bor.
]]
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
