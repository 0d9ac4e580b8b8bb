-- check: the one atomic decision of SPEC §2 tier 2.
-- ARGV[2] user, ARGV[3] line order of the caller's score ('tier1' | 'arrival'),
-- ARGV[4] tier-1 position (when 'tier1'), ARGV[5] active TTL ms, ARGV[6] jti for a new
-- admission, ARGV[7] notice list cap.
-- Replies: {'unknown'} | {'order_mismatch', order} | {'position_taken'} | describe() |
-- {'admitted', rec, ...}.
local user = ARGV[2]
local now = now_ms()
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

-- Already waiting or active: touch the heartbeat and answer where they are.
if redis.call('ZSCORE', K_WAIT, user) then
  redis.call('ZADD', K_WSEEN, now, user)
  return describe(user, now)
end
local exp = tonumber(redis.call('ZSCORE', K_ACT, user))
if exp and exp > now then
  redis.call('ZADD', K_ASEEN, now, user)
  return describe(user, now)
end
if exp then remove_active(user) end

-- Nobody waits and there is room: admit now. Else join the line.
local active = active_count(now)
if redis.call('ZCARD', K_WAIT) == 0 and active < th then
  admit(user, now, tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]))
  local reply = describe(user, now)
  reply[1] = 'admitted'
  return reply
end
if active >= th then redis.call('HINCRBY', K_META, 'full', 1) end
local score
if order == 'tier1' then score = ARGV[4] else score = now_us() end
redis.call('ZADD', K_WAIT, 'NX', score, user)
redis.call('ZADD', K_WSEEN, now, user)
return describe(user, now)
