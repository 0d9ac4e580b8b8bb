-- Registers the event for tier 2.
-- ARGV[2] threshold (integer >= 1), ARGV[3] line order for a new event ('tier1' | 'arrival'),
-- ARGV[4] mode: 'admin' sets the threshold and lifts a tombstone; 'implicit' (an event
-- active in tier 1, or a registration re-hydrated from the durable copy) only fills what is
-- missing, so it never overwrites an admin's threshold racing it, and never resurrects an
-- unregistered event.
-- The line order is fixed at first registration: one score domain per event.
-- Reply: {threshold, order} | {'removed'}.
local now = now_ms()
if ARGV[4] == 'admin' then
  redis.call('HDEL', K_META, 'removed')
  redis.call('HSET', K_META, 'threshold', ARGV[2])
else
  if redis.call('HGET', K_META, 'removed') then return { 'removed' } end
  redis.call('HSETNX', K_META, 'threshold', ARGV[2])
end
redis.call('HSETNX', K_META, 'order', ARGV[3])
redis.call('HSETNX', K_META, 'createdAt', now)
redis.call('HSETNX', K_META, 'last', now)
return { tonumber(redis.call('HGET', K_META, 'threshold')), redis.call('HGET', K_META, 'order') }
