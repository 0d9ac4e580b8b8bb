-- Admission worker step: clean up, then move users from the front of the line into the
-- active set while taken slots < threshold, at most ARGV[2] per call.
-- ARGV[2] batch max, ARGV[3] active TTL ms, ARGV[4] active heartbeat timeout ms,
-- ARGV[5] waiting heartbeat timeout ms, ARGV[6] jti prefix (random, per call),
-- ARGV[7] notice list cap, ARGV[8] cleanup limit per kind, ARGV[9] silence bound ms,
-- ARGV[10] silence crowd, ARGV[11] ghost TTL ms, ARGV[12] collect ms (an admission no call
-- collected for this long frees its slot, docs/invariants.md#26).
-- Reply: {'unknown'} |
--        {'done', expired, evicted, stale, full, waiting, active, dropped, idleMs, restored,
--         user1, user2, ...} (the k-th admitted user's jti is ARGV[6] .. '.' .. k)
-- (idleMs: time since the last check, for retiring idle events; restored: admissions given
-- back to users evicted by a timeout, not counted as new admissions)
local now = clock()
local m = meta('threshold', 'order', 'full', 'dropped', 'last', 'r60s', 'rsw', 'first', 'clean', 'hd', 'sil', 'cc')
local th = tonumber(m.threshold)
if not th then return { 'unknown' } end
local q = { bound = tonumber(ARGV[9]), crowd = tonumber(ARGV[10]), ghost_ttl = tonumber(ARGV[11]),
  collect = tonumber(ARGV[12]), ttl = tonumber(ARGV[3]) }
local expired, evicted, stale = cleanup(now, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[8]), m, q)
local full = tonumber(m.full or '0')
local dropped = tonumber(m.dropped or '0')
local active, held = active_counts(now)
local n = math.min(th - active - held, tonumber(ARGV[2]))
local reply = { 'done', expired, evicted, stale, full, 0, 0, 0, 0, 0 }
local admitted_n = 0
if n > 0 then
  -- The front of the line, taken as a range (cheaper than ZPOPMIN, which removes its members
  -- one by one and sends their scores); then the whole batch at once, one command per key.
  local back = redis.call('ZCOUNT', K_WAIT, '-inf', 0)
  local users = redis.call('ZRANGE', K_WAIT, 0, n - 1)
  if #users > 0 then
    -- (Their waiting heartbeats stay until stale: remove_stale_waitings.)
    redis.call('ZREMRANGEBYRANK', K_WAIT, 0, #users - 1)
    -- First, users evicted by a timeout who came back for their admission (score 0, at the
    -- front): they get it back as it was, if it has not ended meanwhile (else their place
    -- ended with it). Not a new admission: no notice, not in the rate.
    if back > 0 then
      local returning, rest = {}, {}
      for i, user in ipairs(users) do
        if i <= back then returning[#returning + 1] = user else rest[#rest + 1] = user end
      end
      for i = 1, #returning, 500 do
        local part = { unpack(returning, i, math.min(i + 499, #returning)) }
        local recs = redis.call('HMGET', K_GHOST, unpack(part))
        for j, user in ipairs(part) do
          local r = parse(recs[j])
          if r and r.exp > now then
            reactivate(user, r, now)
            reply[10] = reply[10] + 1
          end
        end
      end
      each_chunk('HDEL', K_GHOST, returning)
      users = rest
    end
    -- After cleanup the held set holds only slots still counted: none counted, none held.
    if #users > 0 then
      dropped = dropped + admit_all(users, ARGV[6], now, tonumber(ARGV[3]), tonumber(ARGV[7]), m, held == 0, true)
    end
    for k = 1, #users do reply[10 + k] = users[k] end
    admitted_n = #users
  end
end
reply[6] = redis.call('ZCARD', K_WAIT)
if held == 0 then
  -- No slot was held, and admitting holds none: the slots taken are those counted before, and
  -- the admissions made or given back since (all ending after now).
  reply[7] = active + reply[10] + admitted_n
else
  reply[7] = redis.call('ZCOUNT', K_ACT, '(' .. text(now), '+inf') + redis.call('ZCOUNT', K_HELD, '(' .. text(now), '+inf')
end
-- The counters since the previous step are reported once: back to 0.
reply[8] = dropped
local reset = {}
if full > 0 then reset[#reset + 1] = 'full'; reset[#reset + 1] = 0 end
if dropped > 0 then reset[#reset + 1] = 'dropped'; reset[#reset + 1] = 0 end
if #reset > 0 then redis.call('HSET', K_META, unpack(reset)) end
reply[9] = math.max(0, now - tonumber(m.last or now))
return reply
