--[[
seen-filter: reading a blocked Bloom filter (src/limiter/events/hashing.ts): a value's bits all lie
in one 64-byte block; a missing filter, or a block past its end, reads as '' (zeros: not seen).

Defines: BIT[b] (the mask of bit b), ZERO_BLOCK (64 zero bytes), byteAt[j] and maskOf[j] (the
  current op's bits: byte 1-based in its block, and mask; reused by every seen op), and
  has(block, hashes) -> true when the block has all of the op's bits.
Expects: sbyte, band.
]]
local BIT = {[0] = 1, 2, 4, 8, 16, 32, 64, 128}
local ZERO_BLOCK = string.rep('\0', 64)
local byteAt, maskOf = {}, {}
local function has(block, hashes)
  if #block < 64 then return false end
  for j = 1, hashes do
    if band(sbyte(block, byteAt[j]), maskOf[j]) == 0 then return false end
  end
  return true
end
