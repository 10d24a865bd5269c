--[[
  Releases a lease lock, but only for the owner that holds it (compare-and-delete), so a holder
  whose lease already passed to another owner can never delete the new owner's key.

  KEYS[1]  the lock key
  ARGV[1]  the owner token of this holder

  Returns 1 when the key held this token and was deleted; 0 when it was gone or someone else's.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
