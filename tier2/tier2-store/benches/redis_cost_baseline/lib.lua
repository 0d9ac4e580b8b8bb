-- Shared prelude of every tier-2 script (prepended to each script body by the Rust side).
-- Every script gets the same eleven keys, all with the event's hash tag {eventId} so the
-- script is Redis Cluster safe (one slot):
--   KEYS[1]  waiting   ZSET user -> place in line (tier-1 position, or arrival stamp in µs)
--   KEYS[2]  active    ZSET user -> end of the admission (ms)
--   KEYS[3]  wseen     ZSET user -> last heartbeat of a waiting user (ms)
--   KEYS[4]  aseen     ZSET user -> last heartbeat of an active user (ms)
--   KEYS[5]  meta      HASH threshold, order ('tier1' | 'arrival'), createdAt, full (checks
--                      that found the event full), dropped (notices trimmed), last (last
--                      check, ms), retired (1 = out of the worker's index), tail (last score
--                      given to a re-entering user), removed (1 = tombstone of an
--                      unregistered event)
--   KEYS[6]  jti       HASH user -> "jti|admittedAtMs|expiresAtMs|tokenExpMs" of the current
--                      admission (tokenExpMs: the latest entry token handed out ends then)
--   KEYS[7]  rate      HASH second -> admissions in that second (sliding 60 s rate)
--   KEYS[8]  notices   LIST admission notices waiting to be sent to SQS (JSON)
--   KEYS[9]  owners    HASH tier-1 position -> user (a tier-1 position admits one user);
--                      'u:'..user -> 1 once that user was admitted (re-entry goes to the back)
--   KEYS[10] held      ZSET user -> end of a released slot (ms): a user who left or was
--                      evicted keeps counting against the threshold until the last entry
--                      token handed out to them has expired (docs/adr/0012-entry-token-slots.md)
--   KEYS[11] inflight  ZSET notice JSON -> end of its lease (ms): taken, not yet acknowledged
-- ARGV[1] is a fixed clock offset in ms (0 in production; tests use it to move time).
-- Time always comes from Redis TIME, never from the caller.
local K_WAIT, K_ACT, K_WSEEN, K_ASEEN = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_META, K_JTI, K_RATE, K_NOTICE, K_OWNER = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local K_HELD, K_INFL = KEYS[10], KEYS[11]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
end

-- Arrival stamp in µs (distinct for users arriving in different microseconds).
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(ARGV[1]) * 1000
end

-- The admission record {jti, admittedAt, expiresAt, tokenExp} of a user, or nil.
local function record(user)
  local rec = redis.call('HGET', K_JTI, user)
  if not rec then return nil end
  local jti, at, exp, tok = string.match(rec, '^([^|]*)|(%d+)|(%d+)|?(%d*)$')
  if not jti then return nil end
  return { jti = jti, at = tonumber(at), exp = tonumber(exp), tok = tonumber(tok) or 0 }
end

local function encode(r)
  return r.jti .. '|' .. r.at .. '|' .. r.exp .. '|' .. r.tok
end

-- Removes an active user outright (their admission is over: no token can outlive it).
local function remove_active(user)
  redis.call('ZREM', K_ACT, user)
  redis.call('ZREM', K_ASEEN, user)
  redis.call('HDEL', K_JTI, user)
end

-- Frees an active user's slot for good, but only once the last entry token handed out to
-- them has expired: until then the slot stays counted (held), so at no moment do more
-- than `threshold` users hold a valid entry token.
local function release_active(user, now)
  local r = record(user)
  remove_active(user)
  if r and r.tok > now then redis.call('ZADD', K_HELD, r.tok, user) end
end

local function remove_waiting(user)
  redis.call('ZREM', K_WAIT, user)
  redis.call('ZREM', K_WSEEN, user)
end

-- Slots taken at `now`: valid admissions plus released slots whose last token still runs.
local function active_count(now)
  return redis.call('ZCOUNT', K_ACT, '(' .. now, '+inf') + redis.call('ZCOUNT', K_HELD, '(' .. now, '+inf')
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

-- Moves `user` into the active set and records the admission (jti, rate, notice). For a
-- tier-1-ordered line, marks the user as admitted once (a later re-entry goes to the back).
-- Notices beyond `notice_cap` are dropped from the front and counted in meta `dropped`.
local function admit(user, now, ttl, jti, notice_cap)
  local exp = now + ttl
  redis.call('ZADD', K_ACT, exp, user)
  redis.call('ZADD', K_ASEEN, now, user)
  redis.call('ZREM', K_HELD, user)
  redis.call('HSET', K_JTI, user, jti .. '|' .. now .. '|' .. exp .. '|0')
  redis.call('HINCRBY', K_RATE, tostring(math.floor(now / 1000)), 1)
  if redis.call('HGET', K_META, 'order') == 'tier1' then redis.call('HSET', K_OWNER, 'u:' .. user, 1) end
  -- Written field by field in the order the Rust side serializes a notice, so the stored
  -- form (which orders notices of equal lease) is the same in both stores.
  local notice = '{"userId":' .. cjson.encode(user) .. ',"jti":' .. cjson.encode(jti) ..
    ',"admittedAt":' .. string.format('%d', now) .. ',"attempts":0}'
  local len = redis.call('RPUSH', K_NOTICE, notice)
  if len > notice_cap then
    redis.call('LTRIM', K_NOTICE, -notice_cap, -1)
    redis.call('HINCRBY', K_META, 'dropped', len - notice_cap)
  end
  return exp
end

-- The reply for a user who is in the line or active, or nil. For an active user, `tok_ttl`
-- > 0 means an entry token is about to be handed out: it ends at min(now + tok_ttl, end of
-- the admission), and the record keeps the latest such end (the slot is held until then).
-- Reply: {'queued', place, size, active, threshold, rate60} |
--        {'active', "jti|at|exp|tokenExp", size, active, threshold, rate60}
local function describe(user, now, tok_ttl)
  local th = threshold()
  local size = redis.call('ZCARD', K_WAIT)
  local rank = redis.call('ZRANK', K_WAIT, user)
  if rank then
    return { 'queued', rank + 1, size, active_count(now), th, rate60(now) }
  end
  local exp = tonumber(redis.call('ZSCORE', K_ACT, user))
  if exp and exp > now then
    local r = record(user) or { jti = '', at = 0, exp = exp, tok = 0 }
    if tok_ttl > 0 then
      local tok = math.min(now + tok_ttl, exp)
      if tok > r.tok then
        r.tok = tok
        redis.call('HSET', K_JTI, user, encode(r))
      end
    end
    return { 'active', encode(r), size, active_count(now), th, rate60(now) }
  end
  return nil
end

-- Removes up to `limit` expired actives, actives whose heartbeat is older than
-- `hb_timeout` (their slot is held until their last token expires), waiting users whose
-- heartbeat is older than `wait_timeout`, and released slots whose last token has expired.
local function cleanup(now, hb_timeout, wait_timeout, limit)
  local expired = redis.call('ZRANGEBYSCORE', K_ACT, '-inf', now, 'LIMIT', 0, limit)
  for _, u in ipairs(expired) do remove_active(u) end
  local evicted = redis.call('ZRANGEBYSCORE', K_ASEEN, '-inf', '(' .. (now - hb_timeout), 'LIMIT', 0, limit)
  for _, u in ipairs(evicted) do release_active(u, now) end
  local stale = redis.call('ZRANGEBYSCORE', K_WSEEN, '-inf', '(' .. (now - wait_timeout), 'LIMIT', 0, limit)
  for _, u in ipairs(stale) do remove_waiting(u) end
  redis.call('ZREMRANGEBYSCORE', K_HELD, '-inf', now)
  -- Rate buckets older than two minutes are no longer needed.
  local cutoff = math.floor(now / 1000) - 120
  local fields = redis.call('HKEYS', K_RATE)
  for _, f in ipairs(fields) do
    if tonumber(f) < cutoff then redis.call('HDEL', K_RATE, f) end
  end
  return #expired, #evicted, #stale
end
