-- Removes the event and everyone in it, in one step, leaving a tombstone (meta removed = 1)
-- so an implicit registration (tier 1 still gates the event) does not bring it back; an
-- admin registration lifts it. UNLINK frees large sets in the background.
-- Reply: {wasRegistered}.
local was = 0
if tonumber(redis.call('HGET', K_META, 'threshold')) then was = 1 end
for i = 1, #KEYS do redis.call('UNLINK', KEYS[i]) end
redis.call('HSET', K_META, 'removed', 1)
return { was }
