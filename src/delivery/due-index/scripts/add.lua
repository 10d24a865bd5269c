--[[
  Adds entries to a partition's due index: each to its tenant lane's queue, and the queue to the
  ready set, scored by its earliest entry. Both writes happen here, together, so a queue with
  entries is always listed (claim would never find it otherwise).

  KEYS[1]  the partition's ready set: sorted set of queues (member = '<lane>|<tenant id>', lane 0
           transactional or 1 bulk; score = the queue's earliest due ms)
  ARGV[1]  the prefix of queue keys: queue q is the sorted set ARGV[1]..q (score = due ms, member =
           message id). It carries the same hash tag as KEYS[1], so on a cluster every key touched
           here lives in KEYS[1]'s slot.
  ARGV[2..] triples: queue ('<lane>|<tenant id>'), due ms, message id

  Returns the number of entries that were not in their queue before.
]]
local added = 0
for i = 2, #ARGV, 3 do
  local queue = ARGV[i]
  added = added + redis.call('ZADD', ARGV[1] .. queue, ARGV[i + 1], ARGV[i + 2])
  -- LT: the queue's score only ever moves to an earlier entry (a new member is added as it is).
  redis.call('ZADD', KEYS[1], 'LT', ARGV[i + 1], queue)
end
return added
