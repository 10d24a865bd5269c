--[[
read-state (a block at the top level of check-batch.lua): the ban ends, the scheduled times S and
the packed logs of every subject of the call (a sorted-set log reads as nil), read before anything
is written: one MGET for the call; batched per node, one per subject (a command may not mix
slots, even in a cross-slot script), so a node missing one of the slots refuses the batch (-3)
having written nothing. What the call writes later overrides what it read.

Defines: banEnds[ban key], scheduledEnds[scheduled key] (numbers, or nil), packedLogs[packed key]
  (the string, or false).
  Returns { -3 } from the script when a key is not on this node.
Expects: K, base (call-keys.lua), decisions (call-args.lua).
]]
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
