-- Acknowledges taken notices: ARGV[2] = how many of the following arguments are notices to
-- forget (sent, or given up and counted); the arguments after them are notices to send again
-- later (a new JSON with one more attempt), appended to the list.
-- Reply: {forgotten, requeued}.
local n = tonumber(ARGV[2])
local forgotten = 0
for i = 3, 2 + n do forgotten = forgotten + redis.call('ZREM', K_INFL, ARGV[i]) end
local requeued = 0
for i = 3 + n, #ARGV do
  redis.call('RPUSH', K_NOTICE, ARGV[i])
  requeued = requeued + 1
end
return { forgotten, requeued }
