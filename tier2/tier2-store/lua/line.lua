-- line: the line document of the event (docs/api.md#the-line-document): the figures, and
-- (place, score) of up to MAX_MARKS users spread over the line, the first (the front) and the
-- last included. One ZRANGE of one member per mark: O(log N) each.
-- Notes the second of the call in meta `hd` (once a second at most), as status does: waiting
-- users read this document instead of calling, so it is what tells the cleanup that the API
-- in front still answers (lib.lua, hear).
-- The front is the first score above 0: users back for an admission a timeout took wait at
-- score 0 (check.lua) and are no front the others have to pass (docs/api.md#the-line-document).
-- Reply: {'unknown'} | {'line', size, active, threshold, rate60, sinceFirst, front (0: nobody
-- waits above 0), place1, score1, ...}.
local now = clock()
local m = meta('threshold', 'r60s', 'r60', 'first', 'hd')
if not tonumber(m.threshold) then return { 'unknown' } end
local sec = math.floor(now / 1000)
if tonumber(m.hd) ~= sec then redis.call('HSET', K_META, 'hd', sec) end
local size = redis.call('ZCARD', K_WAIT)
local reply = { 'line', size, active_count(now), tonumber(m.threshold), rate60(now, m), since_first(now, m), 0 }
for _, r in ipairs(mark_ranks(size)) do
  local at = redis.call('ZRANGE', K_WAIT, r, r, 'WITHSCORES')
  if at[2] then
    reply[#reply + 1] = r + 1
    reply[#reply + 1] = at[2]
  end
end
if reply[9] and tonumber(reply[9]) > 0 then
  reply[7] = reply[9]
elseif size > 0 then
  local first = redis.call('ZRANGEBYSCORE', K_WAIT, '(0', '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if first[2] then reply[7] = first[2] end
end
return reply
