-- Stale cleanup without admitting: expired actives, actives whose heartbeat stopped, waiting
-- users whose heartbeat stopped.
-- ARGV[2] active heartbeat timeout ms, ARGV[3] waiting heartbeat timeout ms, ARGV[4] limit.
-- Reply: {'unknown'} | {'cleaned', expired, evicted, stale}.
local now = now_ms()
if not threshold() then return { 'unknown' } end
local expired, evicted, stale = cleanup(now, tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
return { 'cleaned', expired, evicted, stale }
