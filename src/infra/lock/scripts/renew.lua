--[[
  Extends a lease lock, but only for the owner that holds it (compare-and-pexpire).

  KEYS[1]  the lock key
  ARGV[1]  the owner token of this holder (random per acquisition)
  ARGV[2]  the lease in milliseconds, counted from now (Redis time)

  Returns 1 when the key held this token and its expiry was set to ARGV[2] ms from now;
          0 when the key is gone (expired) or held by another owner: the lease is lost.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
