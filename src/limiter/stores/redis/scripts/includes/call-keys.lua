--[[
call-keys: the keys of a batch script, declared or passed in ARGV.
A call of one hash slot declares its keys (KEYS). Batched per node on a cluster, the script runs
as its `#!lua flags=allow-cross-slot-keys` variant (lua-script.ts) with one declared key that
routes the call (not read), ARGV[1] = k and ARGV[2 .. k + 1] the keys (a cluster refuses declared
keys of several slots); the script's own ARGV follow them.

Defines: K (the keys), base (ARGV index before the script's own arguments: 0, or k + 1).
  Returns { -1 } from the script when k is not a number.
Expects: nothing (top level of check-batch.lua, undo-batch.lua).
]]
local K, base = KEYS, 0
if #KEYS == 1 then
  local k = tonumber(ARGV[1])
  if not k then return { -1 } end
  K, base = { unpack(ARGV, 2, k + 1) }, k + 1
end
