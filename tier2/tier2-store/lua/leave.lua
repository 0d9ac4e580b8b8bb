-- leave: frees exactly what the user held: a place in line at once; an active slot once the
-- last entry token handed out to the user has expired (release_actives).
-- ARGV[2] user. Replies {'unknown'} | {'left', wasWaiting, wasActive}.
local user = ARGV[2]
if not tonumber(redis.call('HGET', K_META, 'threshold')) then return { 'unknown' } end
local waiting = redis.call('ZREM', K_WAIT, user)
redis.call('ZREM', K_WSEEN, user)
local active = 0
if redis.call('ZSCORE', K_ACT, user) then
  release_actives({ user }, clock())
  active = 1
end
return { 'left', waiting, active }
