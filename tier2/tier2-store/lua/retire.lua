-- Retires an idle event from the worker's index: nobody waiting, no slot taken, no notice
-- pending, and no check for ARGV[2] ms. The caller has already removed the event from the
-- index; on 'busy' it puts it back. A later check sees `retired` and puts it back itself.
-- Reply: {'unknown'} | {'retired'} | {'busy'}.
local now = clock()
local m = meta('threshold', 'last')
if not tonumber(m.threshold) then return { 'unknown' } end
local last = tonumber(m.last or '0')
if redis.call('ZCARD', K_WAIT) > 0 or active_count(now) > 0 or redis.call('LLEN', K_NOTICE) > 0
    or redis.call('ZCARD', K_INFL) > 0 or now - last < tonumber(ARGV[2]) then
  return { 'busy' }
end
redis.call('HSET', K_META, 'retired', 1)
return { 'retired' }
