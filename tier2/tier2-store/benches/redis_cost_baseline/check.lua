-- check: the one atomic join decision (docs/api.md#tier-2, docs/invariants.md#4).
-- ARGV[2] user, ARGV[3] line order of the caller's score ('tier1' | 'arrival'),
-- ARGV[4] tier-1 position (when 'tier1'), ARGV[5] active TTL ms, ARGV[6] jti for a new
-- admission, ARGV[7] notice list cap, ARGV[8] entry-token TTL ms.
-- Replies: {'unknown'} | {'order_mismatch', order} | {'position_taken'} | describe() |
-- {'admitted', rec, ...}; a describe()-shaped reply has a 7th element: 1 when the event had
-- been retired from the worker's index (the caller puts it back), else 0.
local user = ARGV[2]
local now = now_ms()
local tok_ttl = tonumber(ARGV[8])
local th = threshold()
if not th then return { 'unknown' } end
local order = redis.call('HGET', K_META, 'order')
if order ~= ARGV[3] then return { 'order_mismatch', order } end
-- A tier-1 position belongs to the first user who brings it: one tier-1 admission can never
-- line up several tier-2 identities.
if order == 'tier1' then
  local owner = redis.call('HGET', K_OWNER, ARGV[4])
  if owner and owner ~= user then return { 'position_taken' } end
  if not owner then redis.call('HSET', K_OWNER, ARGV[4], user) end
end
redis.call('HSET', K_META, 'last', now)
local reindex = 0
if redis.call('HDEL', K_META, 'retired') == 1 then reindex = 1 end

local function reply(r)
  r[7] = reindex
  return r
end

-- Already waiting or active: touch the heartbeat and answer where they are.
if redis.call('ZSCORE', K_WAIT, user) then
  redis.call('ZADD', K_WSEEN, now, user)
  return reply(describe(user, now, 0))
end
local exp = tonumber(redis.call('ZSCORE', K_ACT, user))
if exp and exp > now then
  redis.call('ZADD', K_ASEEN, now, user)
  return reply(describe(user, now, tok_ttl))
end
if exp then remove_active(user) end

-- Nobody waits and there is room: admit now. Else join the line.
local active = active_count(now)
if redis.call('ZCARD', K_WAIT) == 0 and active < th then
  admit(user, now, tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]))
  local r = describe(user, now, tok_ttl)
  r[1] = 'admitted'
  return reply(r)
end
if active >= th then redis.call('HINCRBY', K_META, 'full', 1) end
local score
if order == 'tier1' then
  score = tonumber(ARGV[4])
  -- A user admitted before (who left, or whose admission ended) gets no head start from
  -- their old position: they join behind everyone in line now.
  if redis.call('HGET', K_OWNER, 'u:' .. user) then
    local tail = tonumber(redis.call('HGET', K_META, 'tail') or '0')
    local last = redis.call('ZRANGE', K_WAIT, -1, -1, 'WITHSCORES')
    if last[2] and tonumber(last[2]) > tail then tail = tonumber(last[2]) end
    if score > tail then tail = score end
    score = tail + 1
    redis.call('HSET', K_META, 'tail', score)
  end
else
  score = now_us()
end
redis.call('ZADD', K_WAIT, 'NX', score, user)
redis.call('ZADD', K_WSEEN, now, user)
return reply(describe(user, now, 0))
