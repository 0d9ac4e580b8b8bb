-- Stale cleanup without admitting: expired actives, actives whose heartbeat stopped, waiting
-- users whose heartbeat stopped (time the servers could not hear them left out), forgotten ghosts.
-- ARGV[2] active heartbeat timeout ms, ARGV[3] waiting heartbeat timeout ms, ARGV[4] limit,
-- ARGV[5] silence bound ms, ARGV[6] silence crowd, ARGV[7] ghost TTL ms, ARGV[8] collect ms,
-- ARGV[9] active TTL ms (an admission no call collected for that long frees its slot).
-- Reply: {'unknown'} | {'cleaned', expired, evicted, stale}.
local now = clock()
local m = meta('threshold', 'r60s', 'rsw', 'clean', 'hd', 'last', 'sil', 'cc')
if not tonumber(m.threshold) then return { 'unknown' } end
local q = { bound = tonumber(ARGV[5]), crowd = tonumber(ARGV[6]), ghost_ttl = tonumber(ARGV[7]),
  collect = tonumber(ARGV[8]), ttl = tonumber(ARGV[9]) }
local expired, evicted, stale = cleanup(now, tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), m, q)
return { 'cleaned', expired, evicted, stale }
