-- Shared prelude of every tier-2 script (prepended to each script body by the Rust side).
-- Every script gets the same nine keys, all with the event's hash tag {eventId} so the
-- script is Redis Cluster safe (one slot):
--   KEYS[1] waiting   ZSET user -> place in line (tier-1 position, or arrival stamp in µs)
--   KEYS[2] active    ZSET user -> expiry (ms)
--   KEYS[3] wseen     ZSET user -> last heartbeat of a waiting user (ms)
--   KEYS[4] aseen     ZSET user -> last heartbeat of an active user (ms)
--   KEYS[5] meta      HASH threshold, order ('tier1' | 'arrival'), createdAt, full
--   KEYS[6] jti       HASH user -> "jti|admittedAtMs|expiresAtMs" of the current admission
--   KEYS[7] rate      HASH second -> admissions in that second (sliding 60 s rate)
--   KEYS[8] notices   LIST admission notices waiting to be sent to SQS (JSON)
--   KEYS[9] owners    HASH tier-1 position -> user (a tier-1 position admits one user)
-- ARGV[1] is a fixed clock offset in ms (0 in production; tests use it to move time).
-- Time always comes from Redis TIME, never from the caller.
local K_WAIT, K_ACT, K_WSEEN, K_ASEEN = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_META, K_JTI, K_RATE, K_NOTICE, K_OWNER = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
end

-- Arrival stamp in µs (distinct for users arriving in different microseconds).
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(ARGV[1]) * 1000
end

local function remove_active(user)
  redis.call('ZREM', K_ACT, user)
  redis.call('ZREM', K_ASEEN, user)
  redis.call('HDEL', K_JTI, user)
end

local function remove_waiting(user)
  redis.call('ZREM', K_WAIT, user)
  redis.call('ZREM', K_WSEEN, user)
end

-- Active users whose admission is still valid at `now`.
local function active_count(now)
  return redis.call('ZCOUNT', K_ACT, '(' .. now, '+inf')
end

-- Admissions in the last 60 s.
local function rate60(now)
  local cutoff = math.floor(now / 1000) - 60
  local flat = redis.call('HGETALL', K_RATE)
  local sum = 0
  for i = 1, #flat, 2 do
    if tonumber(flat[i]) > cutoff then sum = sum + tonumber(flat[i + 1]) end
  end
  return sum
end

local function threshold()
  return tonumber(redis.call('HGET', K_META, 'threshold'))
end

-- Moves `user` into the active set and records the admission (jti, rate, notice).
local function admit(user, now, ttl, jti, notice_cap)
  local exp = now + ttl
  redis.call('ZADD', K_ACT, exp, user)
  redis.call('ZADD', K_ASEEN, now, user)
  redis.call('HSET', K_JTI, user, jti .. '|' .. now .. '|' .. exp)
  redis.call('HINCRBY', K_RATE, tostring(math.floor(now / 1000)), 1)
  redis.call('RPUSH', K_NOTICE, cjson.encode({ userId = user, jti = jti, admittedAt = now }))
  redis.call('LTRIM', K_NOTICE, -notice_cap, -1)
  return exp
end

-- The reply for a user who is in the line or active, or nil.
local function describe(user, now)
  local th = threshold()
  local size = redis.call('ZCARD', K_WAIT)
  local rank = redis.call('ZRANK', K_WAIT, user)
  if rank then
    return { 'queued', rank + 1, size, active_count(now), th, rate60(now) }
  end
  local exp = tonumber(redis.call('ZSCORE', K_ACT, user))
  if exp and exp > now then
    local rec = redis.call('HGET', K_JTI, user) or ''
    return { 'active', rec, size, active_count(now), th, rate60(now) }
  end
  return nil
end

-- Removes up to `limit` expired actives, actives whose heartbeat is older than
-- `hb_timeout`, and waiting users whose heartbeat is older than `wait_timeout`.
local function cleanup(now, hb_timeout, wait_timeout, limit)
  local expired = redis.call('ZRANGEBYSCORE', K_ACT, '-inf', now, 'LIMIT', 0, limit)
  for _, u in ipairs(expired) do remove_active(u) end
  local evicted = redis.call('ZRANGEBYSCORE', K_ASEEN, '-inf', '(' .. (now - hb_timeout), 'LIMIT', 0, limit)
  for _, u in ipairs(evicted) do remove_active(u) end
  local stale = redis.call('ZRANGEBYSCORE', K_WSEEN, '-inf', '(' .. (now - wait_timeout), 'LIMIT', 0, limit)
  for _, u in ipairs(stale) do remove_waiting(u) end
  -- Rate buckets older than two minutes are no longer needed.
  local cutoff = math.floor(now / 1000) - 120
  local fields = redis.call('HKEYS', K_RATE)
  for _, f in ipairs(fields) do
    if tonumber(f) < cutoff then redis.call('HDEL', K_RATE, f) end
  end
  return #expired, #evicted, #stale
end
