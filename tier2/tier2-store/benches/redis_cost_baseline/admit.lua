-- Admission worker step: clean up, then move users from the front of the line into the
-- active set while taken slots < threshold, at most ARGV[2] per call.
-- ARGV[2] batch max, ARGV[3] active TTL ms, ARGV[4] active heartbeat timeout ms,
-- ARGV[5] waiting heartbeat timeout ms, ARGV[6] jti prefix (random, per call),
-- ARGV[7] notice list cap, ARGV[8] cleanup limit per kind.
-- Reply: {'unknown'} |
--        {'done', expired, evicted, stale, full, waiting, active, dropped, idleMs, user1, jti1, ...}
-- (idleMs: time since the last check, for retiring idle events)
local now = now_ms()
local th = threshold()
if not th then return { 'unknown' } end
local expired, evicted, stale = cleanup(now, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[8]))
local full = tonumber(redis.call('HGET', K_META, 'full') or '0')
if full > 0 then redis.call('HSET', K_META, 'full', 0) end
local free = th - active_count(now)
local n = math.min(free, tonumber(ARGV[2]))
local reply = { 'done', expired, evicted, stale, full, 0, 0, 0, 0 }
if n > 0 then
  local popped = redis.call('ZPOPMIN', K_WAIT, n)
  for i = 1, #popped, 2 do
    local user = popped[i]
    redis.call('ZREM', K_WSEEN, user)
    local jti = ARGV[6] .. '.' .. ((i + 1) / 2)
    admit(user, now, tonumber(ARGV[3]), jti, tonumber(ARGV[7]))
    reply[#reply + 1] = user
    reply[#reply + 1] = jti
  end
end
reply[6] = redis.call('ZCARD', K_WAIT)
reply[7] = active_count(now)
reply[8] = tonumber(redis.call('HGET', K_META, 'dropped') or '0')
if reply[8] > 0 then redis.call('HSET', K_META, 'dropped', 0) end
reply[9] = math.max(0, now - tonumber(redis.call('HGET', K_META, 'last') or now))
return reply
