-- status / heartbeat: where the user is; touches the user's heartbeat when ARGV[3] == '1', an
-- active user's only when it is 'a' (waiting users are not heard from while they wait).
-- ARGV[2] user, ARGV[4] entry-token TTL ms (0: no token is handed out by this call).
-- Replies {'unknown'} | {'none'} | describe().
-- Notes the second of the call in meta `hd` (once a second at most): the cleanup tells an
-- outage of the API in front from visitors who went away by it (lib.lua, hear).
local user = ARGV[2]
local now = clock()
local m = meta('threshold', 'r60s', 'r60', 'first', 'hd')
if not tonumber(m.threshold) then return { 'unknown' } end
local sec = math.floor(now / 1000)
if tonumber(m.hd) ~= sec then redis.call('HSET', K_META, 'hd', sec) end
local reply = describe(user, now, tonumber(ARGV[4]), m)
if not reply then return { 'none' } end
if ARGV[3] ~= '0' then
  if reply[1] ~= 'queued' then
    redis.call('ZADD', K_ASEEN, text(now), user)
  elseif ARGV[3] == '1' then
    redis.call('ZADD', K_WSEEN, text(now), user)
  end
end
return reply
