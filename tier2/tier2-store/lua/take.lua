-- Takes up to ARGV[2] notices to send, each leased for ARGV[3] ms: first notices whose lease
-- ran out (a worker took them and never acknowledged: it crashed or timed out), then new
-- ones from the list. A notice leaves Redis only when acknowledged (ack.lua), so a worker
-- that dies mid-send loses nothing; two workers never hold the same lease.
-- Reply: the notices (JSON strings).
local now = clock()
local max = tonumber(ARGV[2])
local lease = now + tonumber(ARGV[3])
-- Expired leases in a canonical order (their text), so that which ones are taken does not
-- hang on lease ends a few ms apart; there are normally none or a few (a crashed worker's).
local expired = redis.call('ZRANGEBYSCORE', K_INFL, '-inf', now, 'LIMIT', 0, 1000)
table.sort(expired)
local out = {}
for i = 1, math.min(max, #expired) do
  out[i] = expired[i]
  redis.call('ZADD', K_INFL, lease, expired[i])
end
if #out < max then
  local fresh = redis.call('LPOP', K_NOTICE, max - #out)
  if fresh then
    for _, n in ipairs(fresh) do
      redis.call('ZADD', K_INFL, lease, n)
      out[#out + 1] = n
    end
  end
end
return out
