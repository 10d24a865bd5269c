--[[
window (a block of risk-batch.lua's op loop, op 'w'; src/limiter/events/kinds/window.ts): a
sliding-log window, exact, in the limiter's order. KEYS: the packed log (window-log.lua), the ban's
end (one hash tag, so one MGET reads both). ARGV: 'w', windowMs, limit, member (4 bytes, '' =
anonymous), record (0/1), banMs (0 = none).
A member found in the window is a retry (not fired, no write); a ban in force answers fired = 2
(banned; count 0 when record: a check makes no count); else counts the admissions in
(now - w, now] and fires at limit, then with banMs > 0 and record sets the ban key to
now + banMs (PX banMs) at once, inside a check too (the log holds only admissions that stand: a
breach of them bans); else records now when record (inside a check: at its end, and only when the
check is not vetoed: queued in writes).

Defines: appends the op's row to out; advances k and a.
  Returns {-1} from the script on a malformed argument.
Expects: i, k, a, out, o, now, checkEnd, writes, writeWindow (window-log.lua), fmt, sunpack.
]]
local key, banKey = KEYS[k], KEYS[k + 1]
local wText, limit, member, record, ban = ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3], ARGV[a + 4] == '1', tonumber(ARGV[a + 5])
local w = tonumber(wText)
if not (w and limit and ban) then return {-1} end
k = k + 2
a = a + 6
local got = redis.call('MGET', key, banKey)
local log = got[1] or ''
local banEnd = tonumber(got[2])
local entries = #log / 12
-- first: the first entry inside the window (later than now - w); entries are ascending.
local cut = now - w
local first = entries + 1
for j = 1, entries do
  if sunpack('>d', log, 12 * j - 11) > cut then first = j break end
end
local c, repeated = 0, false
for j = first, entries do
  local o = 12 * j - 11
  if sunpack('>d', log, o) <= now then
    c = c + 1
    if member ~= '' and log:sub(o + 8, o + 11) == member then repeated = true end
  end
end
if repeated then
  out[o + 1], out[o + 2], out[o + 3] = 0, c, 0; o = o + 3
elseif banEnd and banEnd > now then
  out[o + 1], out[o + 2], out[o + 3] = 2, record and 0 or c, banEnd - now; o = o + 3
elseif c >= limit then
  -- Admitted again once c - limit + 1 entries have left: the (c - limit + 1)-th counted one.
  local seenCount, retry = 0, 0
  for j = first, entries do
    local t = sunpack('>d', log, 12 * j - 11)
    if t <= now then
      seenCount = seenCount + 1
      if seenCount == c - limit + 1 then retry = t + w - now break end
    end
  end
  if ban > 0 then
    if ban > retry then retry = ban end
    if record then redis.call('SET', banKey, fmt('%d', now + ban), 'PX', fmt('%d', ban)) end
  end
  out[o + 1], out[o + 2], out[o + 3] = 1, c, retry; o = o + 3
else
  out[o + 1], out[o + 2], out[o + 3] = 0, c, 0; o = o + 3
  if record then
    if i <= checkEnd then writes[#writes + 1] = {key, log, first, w, member}
    else writeWindow(key, log, first, w, member) end
  end
end
