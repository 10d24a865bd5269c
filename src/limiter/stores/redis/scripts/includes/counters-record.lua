--[[
counters-record (a block of check-batch.lua's record step, a set with counter rules): the
admission at t under every counter rule that owns its field (call-args.lua): a token bucket's tat
becomes x + T; a fixed window's or a sliding-counter bucket's count grows by one, and when that
makes its field, the fields that no longer count are dropped (a sliding counter keeps the ten
buckets before) and the newest index is remembered; then the TTL (counters.lua).

Defines: nothing.
Expects: kc, set, n, t, arrival (token-bucket-count.lua), ceil, floor, fmt.
]]
local ctrTtlDue = set.bucket
for i = 1, n do
  if set.own[i] then
    local a, field = set.alg[i], set.field[i]
    if a == 4 then
      redis.call('HSET', kc, field, fmt('%.17g', arrival[i] + set.w[i] / set.lim[i]))
    else
      local k
      if a == 2 then k = floor(t / ceil(set.w[i] / 10)) else k = floor(t / set.w[i]) end
      if redis.call('HINCRBY', kc, field .. ':' .. fmt('%d', k), 1) == 1 then
        ctrTtlDue = true
        local last = tonumber(redis.call('HGET', kc, field))
        if not last or last < k then
          if last then
            local keep = 0
            if a == 2 then keep = 10 end
            local j = last - keep
            while j <= last and j <= k - keep - 1 do
              redis.call('HDEL', kc, field .. ':' .. fmt('%d', j))
              j = j + 1
            end
          end
          redis.call('HSET', kc, field, fmt('%d', k))
        end
      end
    end
  end
end
if ctrTtlDue then redis.call('PEXPIRE', kc, set.ctrTtlText) end
