-- Stale cleanup without admitting: expired actives, actives whose heartbeat stopped, waiting
-- users whose heartbeat stopped.
-- ARGV[2] active heartbeat timeout ms, ARGV[3] waiting heartbeat timeout ms, ARGV[4] limit.
-- Reply: {'unknown'} | {'cleaned', expired, evicted, stale}.
local now = clock()
local m = meta('threshold', 'r60s', 'rsw')
if not tonumber(m.threshold) then return { 'unknown' } end
local expired, evicted, stale = cleanup(now, tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), m)
return { 'cleaned', expired, evicted, stale }
