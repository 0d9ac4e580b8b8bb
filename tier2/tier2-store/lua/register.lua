-- Registers the event for tier 2.
-- ARGV[2] threshold (integer >= 1), ARGV[3] line order for a new event ('tier1' | 'arrival'),
-- ARGV[4] mode: 'admin' sets the threshold and lifts a tombstone; 'implicit' (an event
-- active in tier 1) only fills what is missing, so it never overwrites an admin's threshold
-- racing it, and never resurrects an unregistered event; 'rehydrate' (a registration the
-- store had lost, from the durable copy) as 'implicit', and a registration it makes records
-- when the loss was found (meta `lost`): holds signed before then give their places back
-- (check.lua, docs/invariants.md#27).
-- The line order is fixed at first registration: one score domain per event.
-- Reply: {threshold, order} | {'removed'}.
local now = clock()
if ARGV[4] == 'admin' then
  redis.call('HDEL', K_META, 'removed')
  redis.call('HSET', K_META, 'threshold', ARGV[2])
else
  if redis.call('HGET', K_META, 'removed') then return { 'removed' } end
  local made = redis.call('HSETNX', K_META, 'threshold', ARGV[2])
  if made == 1 and ARGV[4] == 'rehydrate' then redis.call('HSETNX', K_META, 'lost', now) end
end
redis.call('HSETNX', K_META, 'order', ARGV[3])
redis.call('HSETNX', K_META, 'createdAt', now)
redis.call('HSETNX', K_META, 'last', now)
return { tonumber(redis.call('HGET', K_META, 'threshold')), redis.call('HGET', K_META, 'order') }
