-- status / heartbeat: where the user is; touches the user's heartbeat when ARGV[3] == '1', an
-- active user's only when it is 'a' (waiting users are not heard from while they wait).
-- ARGV[2] user, ARGV[4] entry-token TTL ms (0: no token is handed out by this call).
-- Replies {'unknown'} | {'none'} | describe().
-- Notes the second of the call in meta `hd` (once a second at most): the cleanup tells an
-- outage of the API in front from visitors who went away by it (lib.lua, hear).
-- A waiting user's answer is written out here rather than through the helpers of lib.lua
-- (meta/need, describe, queued, rate60, since_first): the poll is the most frequent call, and
-- those helpers' generality costs a third of it (benches/seeds_cost.rs).
local user = ARGV[2]
local now = clock()
local v = redis.call('HMGET', K_META, 'threshold', 'r60s', 'r60', 'first', 'hd')
local th = tonumber(v[1])
if not th then return { 'unknown' } end
local sec = math.floor(now / 1000)
if tonumber(v[5]) ~= sec then redis.call('HSET', K_META, 'hd', sec) end
local rank = redis.call('ZRANK', K_WAIT, user)
if rank then
  if ARGV[3] == '1' then redis.call('ZADD', K_WSEEN, text(now), user) end
  local rate = tonumber(v[2]) == sec and tonumber(v[3])
  if not rate then rate = rate60(now, { threshold = v[1], r60s = v[2], r60 = v[3] }) end
  local since = false
  if v[4] then since = math.max(0, sec - math.floor(tonumber(v[4]) / 1000)) end
  local after = '(' .. text(now)
  return { 'queued', rank + 1, redis.call('ZCARD', K_WAIT),
    redis.call('ZCOUNT', K_ACT, after, '+inf') + redis.call('ZCOUNT', K_HELD, after, '+inf'), th, rate, since }
end
local exp = tonumber(redis.call('ZSCORE', K_ACT, user))
if not exp or exp <= now then return { 'none' } end
local m = { threshold = v[1], r60s = v[2], r60 = v[3], first = v[4], hd = v[5] }
local reply = admitted(user, exp, now, tonumber(ARGV[4]), m)
if ARGV[3] ~= '0' then redis.call('ZADD', K_ASEEN, text(now), user) end
return reply
