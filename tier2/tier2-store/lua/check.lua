-- check: the one atomic join decision (docs/api.md#tier-2, docs/invariants.md#4).
-- ARGV[2] user, ARGV[3] line order of the caller's score ('tier1' | 'arrival'),
-- ARGV[4] tier-1 position (when 'tier1'), ARGV[5] active TTL ms, ARGV[6] jti for a new
-- admission, ARGV[7] notice list cap, ARGV[8] entry-token TTL ms.
-- ARGV[9] '1': the caller may join (else, for a caller known only by an expired tier-1 token,
-- only a place or a ghost they already have counts: {'none'}).
-- Replies: {'unknown'} | {'order_mismatch', order} | {'position_taken'} | {'none'} | describe() |
-- {'admitted', rec, ...}; a describe()-shaped reply has an 8th element: 1 when the event had
-- been retired from the worker's index (the caller puts it back), else 0; a 9th: 1 when
-- the caller came back to the place a timeout had taken (docs/invariants.md#23), else 0; and,
-- when queued, a 10th: the caller's score in line (the line document's `front` passes it when
-- the caller leaves the line).
-- ARGV[10] '1': waiting users' heartbeats are kept (a waiting timeout is set), else not.
-- ARGV[11] the caller's hold (what tier 2 signed into their identity): '' none, 'w' a place in
-- line, 'a' an admission; ARGV[12] its score or admission record; ARGV[13] the latest time (ms)
-- it can have been signed. If the store lost its data after that (meta `lost`), the hold
-- comes back as a ghost would (docs/invariants.md#27).
local user = ARGV[2]
local now, now_us = clock()
local tok_ttl = tonumber(ARGV[8])
local m = meta('threshold', 'order', 'retired', 'full', 'r60s', 'r60', 'first')
local th = tonumber(m.threshold)
if not th then return { 'unknown' } end
local order = m.order
if order ~= ARGV[3] then return { 'order_mismatch', order } end
-- A tier-1 position belongs to the first user who brings it: one tier-1 admission can never
-- line up several tier-2 identities.
if order == 'tier1' then
  local owner = redis.call('HGET', K_OWNER, ARGV[4])
  if owner and owner ~= user then return { 'position_taken' } end
  if not owner and ARGV[9] == '1' then redis.call('HSET', K_OWNER, ARGV[4], user) end
end
local reindex = 0
if m.retired then
  redis.call('HDEL', K_META, 'retired')
  reindex = 1
end

-- The meta fields this check writes (the time of the last check; the count of checks that
-- found the event full), in one HSET with the reply.
local writes = { 'last', text(now) }
local restored = 0
local function reply(r)
  redis.call('HSET', K_META, unpack(writes))
  r[8] = reindex
  r[9] = restored
  return r
end

-- Already waiting or active: touch the heartbeat and answer where they are.
local track = ARGV[10] == '1'
local rank = redis.call('ZRANK', K_WAIT, user)
if rank then
  if track then redis.call('ZADD', K_WSEEN, text(now), user) end
  local r = queued(rank, now, m)
  r[10] = redis.call('ZSCORE', K_WAIT, user)
  return reply(r)
end
local exp = tonumber(redis.call('ZSCORE', K_ACT, user))
if exp and exp > now then
  redis.call('ZADD', K_ASEEN, text(now), user)
  return reply(admitted(user, exp, now, tok_ttl, m))
end
if exp then remove_actives({ user }) end

-- Removed by a timeout before (a ghost): back to the old place, or, for an admission, back to
-- it or to the front of the line to wait for it. A visitor who left, or whose admission ran
-- out, has no ghost.
local ghost, admission = redis.call('HGET', K_GHOST, user), nil
if ghost then
  local ends = tonumber(redis.call('ZSCORE', K_GHOSTEND, user))
  redis.call('ZREM', K_GHOSTEND, user)
  admission = parse(ghost)
  if not ends or ends <= now or (admission and admission.exp <= now) then
    redis.call('HDEL', K_GHOST, user)
    ghost, admission = nil, nil
  else
    restored = 1
    -- An admission stays a ghost while its user waits at the front for it (admit.lua).
    if not admission then redis.call('HDEL', K_GHOST, user) end
  end
end
-- A place the store lost since the caller's hold was signed comes back the same way: the hold
-- is tier 2's own signature, the loss is the registration found missing (register.lua).
if not ghost and ARGV[11] ~= '' then
  local lost = tonumber(redis.call('HGET', K_META, 'lost'))
  if lost and tonumber(ARGV[13]) < lost then
    if ARGV[11] == 'w' and tonumber(ARGV[12]) then
      ghost, restored = ARGV[12], 1
    elseif ARGV[11] == 'a' then
      admission = parse(ARGV[12])
      if admission and admission.exp > now then
        ghost, restored = ARGV[12], 1
        -- Kept as a ghost while it waits at the front for its slot (admit.lua), as above.
        redis.call('HSET', K_GHOST, user, ARGV[12])
        if order == 'tier1' then redis.call('HSET', K_OWNER, 'u:' .. user, 1) end
      else
        admission = nil
      end
    end
    if ghost and order == 'tier1' then redis.call('HSETNX', K_OWNER, ARGV[4], user) end
  end
end
if not ghost and ARGV[9] ~= '1' then return reply({ 'none' }) end

-- Nobody waits and there is room: admit now (or give the admission back). Else join the line.
local active = active_count(now)
local size = redis.call('ZCARD', K_WAIT)
if size == 0 and active < th then
  if admission then
    redis.call('HDEL', K_GHOST, user)
    reactivate(user, admission, now)
    return reply(admitted(user, admission.exp, now, tok_ttl, m))
  end
  local dropped = admit_all({ user }, { ARGV[6] }, now, tonumber(ARGV[5]), tonumber(ARGV[7]), m)
  if dropped > 0 then redis.call('HINCRBY', K_META, 'dropped', dropped) end
  local r = describe(user, now, tok_ttl, m)
  r[1] = 'admitted'
  return reply(r)
end
if active >= th then
  writes[3], writes[4] = 'full', (tonumber(m.full) or 0) + 1
end
local score
if admission then
  -- Admitted before the timeout: ahead of everyone waiting.
  score = 0
elseif ghost then
  score = ghost
elseif order == 'tier1' then
  score = tonumber(ARGV[4])
  -- A user admitted before (who left, or whose admission ended) gets no head start from
  -- their old position: they join behind everyone in line now.
  if redis.call('HGET', K_OWNER, 'u:' .. user) then
    local tail = tonumber(redis.call('HGET', K_META, 'tail') or '0')
    local last = redis.call('ZRANGE', K_WAIT, -1, -1, 'WITHSCORES')
    if last[2] and tonumber(last[2]) > tail then tail = tonumber(last[2]) end
    if score > tail then tail = score end
    score = tail + 1
    redis.call('HSET', K_META, 'tail', score)
  end
else
  score = string.format('%d', now_us)
end
local added = redis.call('ZADD', K_WAIT, 'NX', score, user)
if track then redis.call('ZADD', K_WSEEN, text(now), user) end
-- Nothing above changed the slots taken: `active` stands.
local r = queued(redis.call('ZRANK', K_WAIT, user), now, m, size + added, active)
r[10] = score
return reply(r)
