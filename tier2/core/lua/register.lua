-- Registers the event for tier 2 (or changes its threshold).
-- ARGV[2] threshold (integer >= 1), ARGV[3] line order for a new event ('tier1' | 'arrival').
-- The line order is fixed at first registration: one score domain per event.
local now = now_ms()
redis.call('HSET', K_META, 'threshold', ARGV[2])
redis.call('HSETNX', K_META, 'order', ARGV[3])
redis.call('HSETNX', K_META, 'createdAt', now)
return { tonumber(redis.call('HGET', K_META, 'threshold')), redis.call('HGET', K_META, 'order') }
