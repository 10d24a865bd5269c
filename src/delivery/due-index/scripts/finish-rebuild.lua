--[[
  Ends a rebuild: marks the partition's index complete, unless it was wiped while the rebuild ran
  (then entries written before the wipe are gone and the marker stays missing, so the next tick
  rebuilds again). See RedisDueIndex.rebuild for the marker's life.

  KEYS[1]  the partition's rebuild marker
  ARGV[1]  the marker value read (or written) when the rebuild began
  ARGV[2]  the value meaning "complete" to store when ARGV[1] was a "building:" value

  Returns 1 when the index is marked complete, 0 when it was wiped (or rebuilt by another) meanwhile.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if string.sub(ARGV[1], 1, 9) == 'building:' then
  redis.call('SET', KEYS[1], ARGV[2])
end
return 1
