-- leave: frees exactly what the user held (a place in line, or an active slot).
-- ARGV[2] user. Replies {'unknown'} | {'left', wasWaiting, wasActive}.
local user = ARGV[2]
if not threshold() then return { 'unknown' } end
local waiting = redis.call('ZREM', K_WAIT, user)
redis.call('ZREM', K_WSEEN, user)
local active = 0
if redis.call('ZSCORE', K_ACT, user) then
  remove_active(user)
  active = 1
end
return { 'left', waiting, active }
