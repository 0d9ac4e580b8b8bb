-- leave: frees exactly what the user held: a place in line at once; an active slot once the
-- last entry token handed out to the user has expired (release_actives).
-- A ghost (a place a timeout took, docs/invariants.md#23) goes too: who leaves comes back at
-- the tail.
-- ARGV[2] user. Replies {'unknown'} | {'left', wasWaiting, wasActive}.
local user = ARGV[2]
if not tonumber(redis.call('HGET', K_META, 'threshold')) then return { 'unknown' } end
local waiting = redis.call('ZREM', K_WAIT, user)
redis.call('ZREM', K_WSEEN, user)
if redis.call('HDEL', K_GHOST, user) == 1 then redis.call('ZREM', K_GHOSTEND, user) end
local active = 0
if redis.call('ZSCORE', K_ACT, user) then
  local now = clock()
  release_actives({ user }, now)
  active = 1
end
return { 'left', waiting, active }
