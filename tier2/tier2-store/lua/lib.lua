-- Shared prelude of every tier-2 script. The Rust side (src/scripts.rs) makes one Redis
-- function library of it and the script bodies, each body one function (FCALL); where Redis
-- refuses functions, each body runs as a script (EVALSHA) with this prelude before it.
-- Every script gets the same thirteen keys, all with the event's hash tag {eventId} so the
-- script is Redis Cluster safe (one slot); src/redis/keys.rs builds them, in this order, and
-- docs/data.md says how long each entry lives:
--   KEYS[1]  waiting   ZSET user -> place in line (tier-1 position, or arrival stamp in µs)
--   KEYS[2]  active    ZSET user -> end of the admission (ms)
--   KEYS[3]  wseen     ZSET user -> last heartbeat of a waiting user (ms); an admitted
--                      user's stays until it is stale, see cleanup; empty without a waiting
--                      timeout (waiting users are not heard from while they wait)
--   KEYS[4]  aseen     ZSET user -> last heartbeat of an active user (ms); none for an admission
--                      the worker made until a call collects it
--   KEYS[5]  meta      HASH threshold, order ('tier1' | 'arrival'), createdAt, full (checks
--                      that found the event full), dropped (notices trimmed), last (last
--                      check, ms), retired (1 = out of the worker's index), tail (last score
--                      given to a re-entering user), removed (1 = tombstone of an
--                      unregistered event), r60s + r60 (the 60 s admission count as summed
--                      for second r60s, see rate60), rsw (every rate bucket before this
--                      second is deleted, see sweep_rate), first (the event's first
--                      admission, ms; set once), clean (the last cleanup, ms), hd (the last
--                      second a status, heartbeat or line document reached the store), sil
--                      (recent spans in which the servers could not hear visitors, see hear),
--                      cc (the admission end up to which uncollected admissions were judged,
--                      see collect_uncollected), lost (when a registration the store had lost
--                      was re-hydrated, ms: holds signed before it give places back, check.lua)
--   KEYS[6]  jti       HASH user -> "jti|admittedAtMs|expiresAtMs|tokenExpMs" of the current
--                      admission (tokenExpMs: the latest entry token handed out ends then)
--   KEYS[7]  rate      HASH second -> admissions in that second (sliding 60 s rate)
--   KEYS[8]  notices   LIST admission notices waiting to be sent to SQS (JSON)
--   KEYS[9]  owners    HASH tier-1 position -> user (a tier-1 position admits one user);
--                      'u:'..user -> 1 once that user was admitted (re-entry goes to the back)
--   KEYS[10] held      ZSET user -> end of a released slot (ms): a user who left or was
--                      evicted keeps counting against the threshold until the last entry
--                      token handed out to them has expired (docs/adr/0012-entry-token-slots.md)
--   KEYS[11] inflight  ZSET notice JSON -> end of its lease (ms): taken, not yet acknowledged
--   KEYS[12] ghosts    HASH user -> what a user removed by a timeout had: their place in line
--                      (a score), or their admission ("jti|admittedAtMs|expiresAtMs|tokenExpMs");
--                      a returning user gets it back (docs/invariants.md#23). An admission stays
--                      here while its user waits at the front to get it back (score 0)
--   KEYS[13] ghostend  ZSET user -> when their ghost is forgotten (ms)
-- ARGV[1] is a fixed clock offset in ms (0 in production; tests use it to move time).
-- Time always comes from Redis TIME, never from the caller.
--
-- Cost (benches/redis_cost.rs): with a long line, a poll is its two O(log N) steps on the
-- line-sized sets (ZRANK in the line, the heartbeat's ZADD) plus one Redis call per figure;
-- so a script reads Redis TIME once, the meta fields it needs in one HMGET, sums the rate hash
-- at most once a second (rate60), and a worker step writes its admissions with one command
-- per key, not per user, and leaves the admitted users' waiting heartbeats to the cleanup
-- (remove_stale_waitings). As a function library, this prelude is not run again at each call.
local KEYS, ARGV
local K_WAIT, K_ACT, K_WSEEN, K_ASEEN, K_META, K_JTI, K_RATE, K_NOTICE, K_OWNER, K_HELD, K_INFL
local K_GHOST, K_GHOSTEND

-- Binds the keys and arguments of this call. The prelude runs once, when Redis loads the
-- function library; each call binds its own keys first (src/scripts.rs).
local function bind(keys, args)
  KEYS, ARGV = keys, args
  K_WAIT, K_ACT, K_WSEEN, K_ASEEN = keys[1], keys[2], keys[3], keys[4]
  K_META, K_JTI, K_RATE, K_NOTICE, K_OWNER = keys[5], keys[6], keys[7], keys[8], keys[9]
  K_HELD, K_INFL = keys[10], keys[11]
  K_GHOST, K_GHOSTEND = keys[12], keys[13]
end

local NOW, NOW_TEXT

-- Now, from one Redis TIME: in ms, and in µs (arrival stamps: distinct for users arriving in
-- different microseconds).
local function clock()
  local t = redis.call('TIME')
  local s, us, offset = tonumber(t[1]), tonumber(t[2]), tonumber(ARGV[1])
  NOW = s * 1000 + math.floor(us / 1000) + offset
  NOW_TEXT = nil
  return NOW, s * 1000000 + us + offset * 1000
end

-- A time in ms as a command argument. Formatting a number costs as much as a cheap command,
-- so now's text is made once per call.
local function text(ms)
  if ms ~= NOW then return string.format('%d', ms) end
  if not NOW_TEXT then NOW_TEXT = string.format('%d', ms) end
  return NOW_TEXT
end

-- Loads into `m` the named fields of the event's meta hash that it does not hold yet, in one
-- HMGET (a missing field is false). Scripts load what they need up front; the functions
-- below load anything else they need themselves.
local function need(m, ...)
  local missing
  for i = 1, select('#', ...) do
    local name = select(i, ...)
    if m[name] == nil then
      missing = missing or {}
      missing[#missing + 1] = name
    end
  end
  if missing then
    local values = redis.call('HMGET', K_META, unpack(missing))
    for i, name in ipairs(missing) do m[name] = values[i] end
  end
  return m
end

-- The named fields of the event's meta hash, as `need` loads them, without its search for
-- what is missing (a script's first read: nothing is): this is in every poll.
local function meta(...)
  local names = { ... }
  local values = redis.call('HMGET', K_META, unpack(names))
  local m = {}
  for i = 1, #names do m[names[i]] = values[i] end
  return m
end

-- Runs `cmd key a1 a2 ...` over the list `args`, at most 1000 arguments a call (Lua's unpack
-- is limited; pairs stay whole). Returns the last reply.
local function each_chunk(cmd, key, args)
  local reply
  for i = 1, #args, 1000 do
    reply = redis.call(cmd, key, unpack(args, i, math.min(i + 999, #args)))
  end
  return reply
end

-- The admission record {jti, admittedAt, expiresAt, tokenExp} stored as `rec`, or nil.
local function parse(rec)
  if not rec then return nil end
  local jti, at, exp, tok = string.match(rec, '^([^|]*)|(%d+)|(%d+)|?(%d*)$')
  if not jti then return nil end
  return { jti = jti, at = tonumber(at), exp = tonumber(exp), tok = tonumber(tok) or 0 }
end

local function encode(r)
  return r.jti .. '|' .. r.at .. '|' .. r.exp .. '|' .. r.tok
end

-- Removes active users outright (their admission is over: no token can outlive it).
local function remove_actives(users)
  if #users == 0 then return end
  each_chunk('ZREM', K_ACT, users)
  each_chunk('ZREM', K_ASEEN, users)
  each_chunk('HDEL', K_JTI, users)
end

-- Frees active users' slots for good, but each only once the last entry token handed out to
-- them has expired: until then the slot stays counted (held), so at no moment do more than
-- `threshold` users hold a valid entry token. `ghost_ttl` (an eviction by a timeout, not a
-- leave): each keeps a ghost of their admission for that long, or until it would have ended, so
-- that coming back gives it back (docs/invariants.md#23).
local function release_actives(users, now, ghost_ttl)
  if #users == 0 then return end
  local held, ghosts, ends = {}, {}, {}
  for i = 1, #users, 500 do
    local part = { unpack(users, i, math.min(i + 499, #users)) }
    local recs = redis.call('HMGET', K_JTI, unpack(part))
    for j, user in ipairs(part) do
      local r = parse(recs[j])
      if r and r.tok > now then
        held[#held + 1] = r.tok
        held[#held + 1] = user
      end
      if ghost_ttl and r and r.exp > now then
        ghosts[#ghosts + 1] = user
        ghosts[#ghosts + 1] = encode(r)
        ends[#ends + 1] = math.min(now + ghost_ttl, r.exp)
        ends[#ends + 1] = user
      end
    end
  end
  remove_actives(users)
  if #held > 0 then each_chunk('ZADD', K_HELD, held) end
  if #ghosts > 0 then
    each_chunk('HSET', K_GHOST, ghosts)
    each_chunk('ZADD', K_GHOSTEND, ends)
  end
end

-- Waiting users whose last heartbeat is before `cutoff`, up to `limit` heartbeats: they
-- leave the line, each keeping a ghost of their place for `ghost_ttl` (docs/invariants.md#23;
-- one waiting at the front for their admission keeps that, until it would have ended). The
-- heartbeat set also holds the last waiting heartbeat of users admitted since: an admission
-- leaves it, because taking one member out of the middle of a large sorted set costs several
-- µs, and the front of it, taken here as one range, far less. Those go uncounted. Returns how
-- many left the line.
local function remove_stale_waitings(cutoff, limit, now, ghost_ttl)
  local old = redis.call('ZRANGEBYSCORE', K_WSEEN, '-inf', '(' .. cutoff, 'LIMIT', 0, limit)
  if #old == 0 then return 0 end
  local stale, ghosts, ends, back = {}, {}, {}, {}
  for i = 1, #old, 1000 do
    local part = { unpack(old, i, math.min(i + 999, #old)) }
    local places = redis.call('ZMSCORE', K_WAIT, unpack(part))
    for j, user in ipairs(part) do
      if places[j] then
        stale[#stale + 1] = user
        if tonumber(places[j]) <= 0 then
          back[#back + 1] = user
        else
          ghosts[#ghosts + 1] = user
          ghosts[#ghosts + 1] = places[j]
          ends[#ends + 1] = now + ghost_ttl
          ends[#ends + 1] = user
        end
      end
    end
  end
  if #stale > 0 then each_chunk('ZREM', K_WAIT, stale) end
  -- Users back for their admission (score 0) keep it as their ghost.
  for i = 1, #back, 500 do
    local part = { unpack(back, i, math.min(i + 499, #back)) }
    local recs = redis.call('HMGET', K_GHOST, unpack(part))
    for j, user in ipairs(part) do
      local r = parse(recs[j])
      if r then
        ends[#ends + 1] = math.min(now + ghost_ttl, r.exp)
        ends[#ends + 1] = user
      end
    end
  end
  if #ghosts > 0 then each_chunk('HSET', K_GHOST, ghosts) end
  if #ends > 0 then each_chunk('ZADD', K_GHOSTEND, ends) end
  -- `old` is the front of the heartbeat set: ranks 0 to #old - 1.
  redis.call('ZREMRANGEBYRANK', K_WSEEN, 0, #old - 1)
  return #stale
end

-- Slots taken at `now`: valid admissions, and released slots whose last token still runs.
local function active_counts(now)
  local after = '(' .. text(now)
  return redis.call('ZCOUNT', K_ACT, after, '+inf'), redis.call('ZCOUNT', K_HELD, after, '+inf')
end

local function active_count(now)
  local active, held = active_counts(now)
  return active + held
end

-- Admissions in the last 60 s: the rate buckets after second - 60. Summing the hash (up to
-- 121 buckets) on every poll cost more than the rest of the poll, so the sum is kept in meta
-- for the second it was made for (r60s, r60) and reused within that second; every change of
-- the hash keeps it right (rate_add) or drops it (sweep_rate); it is written only for a
-- registered event.
local function rate60(now, m)
  need(m, 'threshold', 'r60s', 'r60')
  local sec = math.floor(now / 1000)
  if tonumber(m.r60s) == sec and tonumber(m.r60) then return tonumber(m.r60) end
  local cutoff = sec - 60
  local flat = redis.call('HGETALL', K_RATE)
  local sum = 0
  for i = 1, #flat, 2 do
    if tonumber(flat[i]) > cutoff then sum = sum + tonumber(flat[i + 1]) end
  end
  if m.threshold then
    redis.call('HSET', K_META, 'r60s', sec, 'r60', sum)
    m.r60s, m.r60 = sec, sum
  end
  return sum
end

-- Counts `n` admissions at `now` in the rate hash, and in the cached 60 s sum when its window
-- holds this second's bucket. A bucket before the swept mark (a clock set back) drops the
-- mark.
local function rate_add(now, n, m)
  need(m, 'r60s', 'rsw')
  local sec = math.floor(now / 1000)
  redis.call('HINCRBY', K_RATE, tostring(sec), n)
  local cached = tonumber(m.r60s)
  if cached and sec > cached - 60 then m.r60 = redis.call('HINCRBY', K_META, 'r60', n) end
  local swept = tonumber(m.rsw)
  if swept and sec < swept then
    redis.call('HDEL', K_META, 'rsw')
    m.rsw = false
  end
end

-- Deletes the rate buckets older than two minutes. Meta `rsw` marks that no bucket before it
-- is left, so once a second only the seconds since the last sweep are deleted (by name),
-- instead of reading every bucket.
local function sweep_rate(now, m)
  need(m, 'r60s', 'rsw')
  local cutoff = math.floor(now / 1000) - 120
  local swept = tonumber(m.rsw)
  if swept and cutoff <= swept then return end
  local old = {}
  if swept and cutoff - swept <= 600 then
    for sec = swept, cutoff - 1 do old[#old + 1] = tostring(sec) end
  else
    for _, f in ipairs(redis.call('HKEYS', K_RATE)) do
      if tonumber(f) < cutoff then old[#old + 1] = f end
    end
  end
  if #old > 0 then each_chunk('HDEL', K_RATE, old) end
  redis.call('HSET', K_META, 'rsw', cutoff)
  m.rsw = cutoff
  -- A cached sum counts buckets after its second - 60; if one of those may have gone, drop it.
  local cached = tonumber(m.r60s)
  if cached and #old > 0 and cutoff - 1 > cached - 60 then
    redis.call('HDEL', K_META, 'r60s')
    m.r60s = false
  end
end

-- Moves `users` into the active set and records their admissions (jti, rate, notice): the
-- i-th user gets jtis[i]. Their heartbeat starts now, unless `uncollected` (the worker's
-- admissions, which nobody has come for yet): those get theirs from the first call that finds
-- them, and the cleanup frees the slots of those nobody came for (collect_uncollected,
-- docs/invariants.md#26). For a tier-1-ordered line, marks them as admitted once (a later
-- re-entry goes to the back). Notices beyond `notice_cap` are dropped from the front; returns
-- how many (the caller counts them in meta `dropped`). One command per key for all users, and
-- what is the same for all of them formatted once. `no_held`: the caller knows the held set is
-- empty (nobody to take out of it).
-- A notice quotes a user id as it is when nothing in it needs escaping (cjson escapes '"',
-- '\\', '/' and control characters), which is every user id but a few: encoding costs about
-- twice the concatenation. A jti needs none: a random URL-safe prefix and a number.
local function admit_all(users, jtis, now, ttl, notice_cap, m, no_held, uncollected)
  need(m, 'order', 'first')
  local exp = now + ttl
  local at, ends = string.format('%d', now), string.format('%d', exp)
  if not m.first then
    redis.call('HSET', K_META, 'first', at)
    m.first = at
  end
  local rec_tail = '|' .. at .. '|' .. ends .. '|0'
  local notice_tail = '","admittedAt":' .. at .. ',"attempts":0}'
  local tier1 = m.order == 'tier1'
  -- `jtis`: the jtis, or their prefix (the i-th user's is prefix.i).
  local prefix = type(jtis) == 'string' and (jtis .. '.')
  local act, seen, recs, owners, notices = {}, {}, {}, {}, {}
  local j = 0
  -- One search over all the ids tells whether any needs escaping (usually none).
  local plain = not string.find(table.concat(users), '[%c"\\/]')
  for i, user in ipairs(users) do
    local jti = prefix and (prefix .. i) or jtis[i]
    j = j + 2
    act[j - 1], act[j] = ends, user
    if not uncollected then seen[j - 1], seen[j] = at, user end
    recs[j - 1], recs[j] = user, jti .. rec_tail
    if tier1 then owners[j - 1], owners[j] = 'u:' .. user, 1 end
    -- Written field by field in the order the Rust side serializes a notice, so the stored
    -- form (which orders notices of equal lease) is the same in both stores.
    if not plain and string.find(user, '[%c"\\/]') then
      notices[i] = '{"userId":' .. cjson.encode(user) .. ',"jti":"' .. jti .. notice_tail
    else
      notices[i] = '{"userId":"' .. user .. '","jti":"' .. jti .. notice_tail
    end
  end
  each_chunk('ZADD', K_ACT, act)
  if not uncollected then each_chunk('ZADD', K_ASEEN, seen) end
  if not no_held then each_chunk('ZREM', K_HELD, users) end
  each_chunk('HSET', K_JTI, recs)
  rate_add(now, #users, m)
  if tier1 then each_chunk('HSET', K_OWNER, owners) end
  local len = each_chunk('RPUSH', K_NOTICE, notices)
  if len > notice_cap then
    redis.call('LTRIM', K_NOTICE, -notice_cap, -1)
    return len - notice_cap
  end
  return 0
end

-- Gives a user evicted by a timeout their admission back as it was: the same jti and end, and
-- the end of the latest token handed out for it (a leave keeps the slot held until then). Not
-- a new admission: no notice, not in the rate (docs/invariants.md#23).
local function reactivate(user, r, now)
  redis.call('ZADD', K_ACT, string.format('%d', r.exp), user)
  redis.call('ZADD', K_ASEEN, text(now), user)
  redis.call('ZREM', K_HELD, user)
  redis.call('HSET', K_JTI, user, encode(r))
end

-- Whole seconds from the event's first admission to now, or false before it (wait estimates
-- trust the measured rate once it covers a whole minute).
local function since_first(now, m)
  need(m, 'first')
  if not m.first then return false end
  return math.max(0, math.floor(now / 1000) - math.floor(tonumber(m.first) / 1000))
end

-- The reply for a user at `rank` in the line: {'queued', place, size, active, threshold,
-- rate60, sinceFirst}. `size` and `active` when the caller already has them.
local function queued(rank, now, m, size, active)
  local rate = rate60(now, m)
  return { 'queued', rank + 1, size or redis.call('ZCARD', K_WAIT), active or active_count(now),
    tonumber(m.threshold), rate, since_first(now, m) }
end

-- The reply for a user whose admission ends at `exp` (> now): `tok_ttl` > 0 means an entry
-- token is about to be handed out: it ends at min(now + tok_ttl, end of the admission), and
-- the record keeps the latest such end (the slot is held until then).
-- {'active', "jti|at|exp|tokenExp", size, active, threshold, rate60, sinceFirst}.
local function admitted(user, exp, now, tok_ttl, m)
  local r = parse(redis.call('HGET', K_JTI, user)) or { jti = '', at = 0, exp = exp, tok = 0 }
  if tok_ttl > 0 then
    local tok = math.min(now + tok_ttl, exp)
    if tok > r.tok then
      r.tok = tok
      redis.call('HSET', K_JTI, user, encode(r))
    end
  end
  local rate = rate60(now, m)
  return { 'active', encode(r), redis.call('ZCARD', K_WAIT), active_count(now), tonumber(m.threshold), rate,
    since_first(now, m) }
end

-- The reply for a user who is in the line or active (queued / admitted), or nil.
local function describe(user, now, tok_ttl, m)
  local rank = redis.call('ZRANK', K_WAIT, user)
  if rank then return queued(rank, now, m) end
  local exp = tonumber(redis.call('ZSCORE', K_ACT, user))
  if exp and exp > now then return admitted(user, exp, now, tok_ttl, m) end
  return nil
end

-- The 0-based ranks the line document marks in a line of `size`: MAX_MARKS spread evenly, the
-- first and the last included (memory.rs `mark_ranks`).
local MAX_MARKS = 16

local function mark_ranks(size)
  local out = {}
  if size <= MAX_MARKS then
    for r = 0, size - 1 do out[#out + 1] = r end
    return out
  end
  for i = 0, MAX_MARKS - 1 do
    local r = math.floor(i * (size - 1) / (MAX_MARKS - 1))
    if out[#out] ~= r then out[#out + 1] = r end
  end
  return out
end

-- Server silences (docs/invariants.md#23): meta `sil` holds the recent spans "from-to" (ms),
-- oldest first, in which the servers could not hear visitors; that time does not count
-- against heartbeats. At most MAX_SILENCES are kept.
local MAX_SILENCES = 8

local function silences(m)
  need(m, 'sil')
  local out = {}
  if m.sil then
    for a, b in string.gmatch(m.sil, '(%d+)-(%d+)') do out[#out + 1] = { tonumber(a), tonumber(b) } end
  end
  return out
end

-- The time before which a heartbeat is older than `timeout` of time the servers could hear:
-- walking back from now, the silences `sil` do not count.
local function audible_cutoff(now, timeout, sil)
  local t, rem = now, timeout
  for i = #sil, 1, -1 do
    local from, to = sil[i][1], sil[i][2]
    if to <= t - rem then break end
    if to < t then rem = rem - (t - to) end
    if from < t then t = from end
  end
  return t - rem
end

-- The cleanup's own hearing, before it judges heartbeats: a span since `from` in which the
-- servers could not hear visitors is recorded (merged with the last one when they touch) when
-- - the cleanup itself has not run for more than `bound` ms (Redis or the worker was down:
--   nobody could be heard, and nobody was removed), from its last run (meta `clean`); or
-- - no call of anybody (a check, meta `last`; a status or heartbeat, meta `hd`) reached the
--   store for more than `bound` ms while at least `crowd` people were in the event (the API in
--   front was down: people in line poll every few seconds), from the last call heard.
-- Spans out of reach of `keep` ms of audible time are forgotten. Returns the silences, and
-- what meta `sil` becomes: nil (unchanged), '' (deleted) or its new text; the cleanup writes it
-- with `clean` = now in one command.
local function hear(now, bound, crowd, keep, m)
  need(m, 'clean', 'hd', 'last', 'sil')
  local sil = silences(m)
  local from
  local clean = tonumber(m.clean)
  if clean and now - clean > bound then from = clean end
  local heard = math.max((tonumber(m.hd) or 0) * 1000, tonumber(m.last) or 0)
  if crowd > 0 and heard > 0 and now - heard > bound
      and redis.call('ZCARD', K_WAIT) + redis.call('ZCARD', K_ACT) >= crowd then
    if not from or heard < from then from = heard end
  end
  -- The usual case: no silence kept, none to record.
  if not from and #sil == 0 then return sil, nil end
  local changed = false
  if from then
    local last = sil[#sil]
    if last and last[2] >= from then
      if from < last[1] then last[1] = from end
      last[2] = now
    else
      sil[#sil + 1] = { from, now }
    end
    changed = true
  end
  local horizon = audible_cutoff(now, keep, sil)
  local first = 1
  while first <= #sil and sil[first][2] <= horizon do first = first + 1 end
  if #sil - first + 1 > MAX_SILENCES then first = #sil - MAX_SILENCES + 1 end
  local kept = {}
  for i = first, #sil do kept[#kept + 1] = sil[i] end
  if first > 1 then changed = true end
  if not changed then return kept, nil end
  local parts = {}
  for i, s in ipairs(kept) do parts[i] = string.format('%d-%d', s[1], s[2]) end
  return kept, table.concat(parts, ',')
end

-- Frees the slots of the worker's admissions that no call has collected (they have no
-- heartbeat yet) `collect` ms of audible time after they were made, each leaving a ghost of its
-- admission (docs/invariants.md#26). Every admission lasts `ttl`, so its end tells when it was
-- made: the admissions due are the active set's members ending after the mark `cc` (meta; the
-- end up to which they were judged) and by the cutoff + `ttl`, a second's worth per step; one
-- ZMSCORE tells which of them have a heartbeat. Every active heartbeat is an active user's, so
-- while the two sets are the same size every admission has been collected, and the mark just
-- moves on: the usual case costs two ZCARDs a step, nothing per admission. A worker step's
-- admissions share one end, so when `limit` cuts the range, the mark stays before the last end
-- read, and its admissions are judged whole by the next pass (only a single end shared by more
-- than `limit` admissions is judged in part). Returns the users to free, and the new mark (nil:
-- unchanged), which the cleanup writes.
local function collect_uncollected(now, collect, ttl, limit, sil, m)
  need(m, 'cc')
  local upto = audible_cutoff(now, collect, sil) + ttl
  local from = tonumber(m.cc)
  if from and from >= upto then return {}, nil end
  local mark, gone = string.format('%d', upto), {}
  if redis.call('ZCARD', K_ACT) > redis.call('ZCARD', K_ASEEN) then
    local due = redis.call('ZRANGEBYSCORE', K_ACT, from and ('(' .. string.format('%d', from)) or '-inf', mark,
      'LIMIT', 0, limit)
    for i = 1, #due, 1000 do
      local part = { unpack(due, i, math.min(i + 999, #due)) }
      local seen = redis.call('ZMSCORE', K_ASEEN, unpack(part))
      for j, user in ipairs(part) do
        if not seen[j] then gone[#gone + 1] = user end
      end
    end
    if #due == limit then
      -- Back to the end before the last one read, if there is one.
      local ends = redis.call('ZMSCORE', K_ACT, due[1], due[#due])
      mark = ends[2]
      if ends[1] ~= ends[2] then
        local before = redis.call('ZREVRANGEBYSCORE', K_ACT, '(' .. ends[2], ends[1], 'WITHSCORES', 'LIMIT', 0, 1)
        mark = before[2] or ends[2]
      end
    end
  end
  m.cc = mark
  return gone, mark
end

-- Removes up to `limit` expired actives, actives whose heartbeat is older than
-- `hb_timeout` (their slot is held until their last token expires), waiting users whose
-- heartbeat is older than `wait_timeout` (of `limit` heartbeats, see remove_stale_waitings),
-- released slots whose last token has expired, and ghosts whose time is up. Heartbeat ages
-- leave out the silences (hear). `q`: {bound, crowd, ghost_ttl}.
local function cleanup(now, hb_timeout, wait_timeout, limit, m, q)
  local expired = redis.call('ZRANGEBYSCORE', K_ACT, '-inf', now, 'LIMIT', 0, limit)
  remove_actives(expired)
  local sil, sil_text = hear(now, q.bound, q.crowd, math.max(hb_timeout, wait_timeout), m)
  local evicted = redis.call('ZRANGEBYSCORE', K_ASEEN, '-inf', '(' .. audible_cutoff(now, hb_timeout, sil),
    'LIMIT', 0, limit)
  release_actives(evicted, now, q.ghost_ttl)
  local uncollected, mark = collect_uncollected(now, q.collect, q.ttl, 10 * limit, sil, m)
  release_actives(uncollected, now, q.ghost_ttl)
  -- The meta the hearing and the collect judging changed, in one command.
  local w = { 'clean', text(now) }
  if mark then w[#w + 1], w[#w + 2] = 'cc', mark end
  if sil_text == '' then
    redis.call('HDEL', K_META, 'sil')
  elseif sil_text then
    w[#w + 1], w[#w + 2] = 'sil', sil_text
  end
  redis.call('HSET', K_META, unpack(w))
  -- Without a waiting timeout (0) waiting users are not heard from while they wait: none is
  -- stale, and the heartbeat set stays empty.
  local stale = 0
  if wait_timeout > 0 then
    stale = remove_stale_waitings(audible_cutoff(now, wait_timeout, sil), limit, now, q.ghost_ttl)
  end
  redis.call('ZREMRANGEBYSCORE', K_HELD, '-inf', now)
  local gone = redis.call('ZRANGEBYSCORE', K_GHOSTEND, '-inf', now, 'LIMIT', 0, limit)
  if #gone > 0 then
    each_chunk('HDEL', K_GHOST, gone)
    each_chunk('ZREM', K_GHOSTEND, gone)
  end
  sweep_rate(now, m)
  return #expired, #evicted + #uncollected, stale
end
