--[[
  Adds entries to a partition's due index. Both writes of an entry happen here, together, so an
  entry can never sit in a bucket that the bucket set does not list (claim would never find it).

  KEYS[1]  the partition's bucket set: sorted set of bucket ids (member = bucket start ms as text,
           score = the same start)
  ARGV[1]  the prefix of bucket keys: bucket b is the sorted set ARGV[1]..b (score = due ms,
           member = message id). It carries the same hash tag as KEYS[1], so on a cluster every
           key touched here lives in KEYS[1]'s slot.
  ARGV[2..] triples: bucket id (its start ms), due ms, message id

  Returns the number of entries that were not in their bucket before.
]]
local added = 0
local listed = {}
for i = 2, #ARGV, 3 do
  local bucket = ARGV[i]
  if not listed[bucket] then
    redis.call('ZADD', KEYS[1], bucket, bucket)
    listed[bucket] = true
  end
  added = added + redis.call('ZADD', ARGV[1] .. bucket, ARGV[i + 1], ARGV[i + 2])
end
return added
