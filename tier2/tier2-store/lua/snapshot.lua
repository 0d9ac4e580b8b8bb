-- A consistent snapshot for status pages, tests and the invariant checks:
-- {threshold|false, order|false, waiting, active (slots taken now, held ones included),
--  activeMembers (all members of the active set), both, rate60, held (released slots whose
--  last token still runs), pendingNotices (queued + in flight), ghosts (places and admissions
--  kept for users a timeout removed, docs/invariants.md#23)}
-- `both` counts users that are in the waiting and the active set at once (must be 0).
local now = clock()
local m = meta('threshold', 'order', 'r60s', 'r60')
local both = 0
local members = redis.call('ZRANGE', K_ACT, 0, -1)
for _, u in ipairs(members) do
  if redis.call('ZSCORE', K_WAIT, u) then both = both + 1 end
end
return { tonumber(m.threshold) or false, m.order or false, redis.call('ZCARD', K_WAIT),
  active_count(now), #members, both, rate60(now, m), redis.call('ZCOUNT', K_HELD, '(' .. now, '+inf'),
  redis.call('LLEN', K_NOTICE) + redis.call('ZCARD', K_INFL), redis.call('HLEN', K_GHOST) }
