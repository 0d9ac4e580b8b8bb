-- A consistent snapshot for status pages, tests and the invariant checks:
-- {threshold|false, order|false, waiting, active (valid now), activeMembers (all), both, rate60}
-- `both` counts users that are in the waiting and the active set at once (must be 0).
local now = now_ms()
local th = threshold()
local both = 0
local members = redis.call('ZRANGE', K_ACT, 0, -1)
for _, u in ipairs(members) do
  if redis.call('ZSCORE', K_WAIT, u) then both = both + 1 end
end
return { th or false, redis.call('HGET', K_META, 'order') or false, redis.call('ZCARD', K_WAIT),
  active_count(now), #members, both, rate60(now) }
