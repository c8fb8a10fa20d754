"""The session gate's Lua scripts: every change of gate state is one of these, run atomically.

Times are Redis server milliseconds (``TIME``), so the clocks of producer and worker hosts never
matter. A hold is *live* while its score (effective expiry) is greater than now; the gate of a
session is open when it has no live hold. Each script raises the TTL of the keys it writes so
an abandoned session leaves nothing behind. ``claim`` reaches across sessions, so it builds
per-session key names from templates passed in ARGV, and ``enqueue`` and ``complete`` also
run the writes their callers pass in ARGV (the job's payload, record and index; a result's
counts) in the same atomic step: fine on a single Redis and under Sentinel, not on Cluster.
"""

from __future__ import annotations

_PRELUDE = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function int(x) return string.format('%d', x) end
-- a TTL of at least ms: one command when it grows (the usual case), two on a fresh key
local function extend(key, ms)
  if redis.call('PEXPIRE', key, int(ms), 'GT') == 0 then
    redis.call('PEXPIRE', key, int(ms), 'NX')
  end
end
local function live(holds, now)
  return redis.call('ZCOUNT', holds, '(' .. int(now), '+inf')
end
local function new_token(key, ttl)
  local token = redis.call('INCR', key)
  extend(key, ttl)
  return token
end
local function announce_if_open(holds, channel, now)
  if live(holds, now) == 0 then redis.call('PUBLISH', channel, 'open') end
end
-- ARGV from index i on: writes, each its argument count and then its arguments. An EXPIRE …
-- NX right after an EXPIRE that set the same key's TTL is a no-op, and is skipped.
local function run_writes(i)
  local timed = nil
  while i <= #ARGV do
    local n = tonumber(ARGV[i])
    local name, key = ARGV[i + 1], ARGV[i + 2]
    if name == 'EXPIRE' and ARGV[i + n] == 'NX' and key == timed then
      timed = nil
    else
      local reply = redis.call(unpack(ARGV, i + 1, i + n))
      timed = name == 'EXPIRE' and reply == 1 and key or nil
    end
    i = i + n + 1
  end
end
-- ks: holds, jobs, expiries, token; the hold of job in session sid → its fencing token
local function close_hold(ks, sid, job, lease, cap, tool_type, margin)
  local raw = redis.call('HGET', ks[2], job)
  if raw then return cjson.decode(raw).token end
  local now = now_ms()
  local token = new_token(ks[4], cap + margin)
  local expiry = math.min(now + lease, now + cap)
  redis.call('HSET', ks[2], job, cjson.encode({token = token, cap_ms = now + cap,
    lease_ms = lease, tool_type = tool_type, closed_at_ms = now}))
  redis.call('ZADD', ks[1], int(expiry), job)
  redis.call('ZADD', ks[3], int(expiry), sid .. '\\n' .. job)
  for i = 1, 3 do extend(ks[i], cap + margin) end
  return token
end
"""

# KEYS holds, jobs, expiries, token · ARGV sid, job, lease_ms, cap_ms, tool_type, margin_ms
# (holds no sweeper claimed within the margin are dropped from expiries by ``claim``)
_CLOSE = """
return close_hold(KEYS, ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5],
  tonumber(ARGV[6]))
"""

# KEYS job record[, holds, jobs, expiries, token] · ARGV sid, job, lease_ms, cap_ms, tool_type,
# margin_ms, then the writes, each as its argument count and its arguments → the job's gate
# token, 0 when it holds no gate (batch), -1 when the job id is another session's (nothing is
# written then). A job is stored, indexed and holds its gate in one atomic step.
_ENQUEUE = """
local owner = redis.call('HGET', KEYS[1], 'session_id')
if owner and owner ~= ARGV[1] then return -1 end
run_writes(7)
if #KEYS == 1 then return 0 end
return close_hold({KEYS[2], KEYS[3], KEYS[4], KEYS[5]}, ARGV[1], ARGV[2], tonumber(ARGV[3]),
  tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]))
"""

# KEYS expiries, then each hold's holds and jobs · ARGV sid, job, token of each hold → 1 per
# hold renewed, 0 per hold lost (one call renews every hold a worker process has)
_RENEW = """
local now = now_ms()
local out = {}
for h = 1, #ARGV / 3 do
  local holds, jobs = KEYS[2 * h], KEYS[2 * h + 1]
  local sid, job = ARGV[3 * h - 2], ARGV[3 * h - 1]
  local raw = redis.call('HGET', jobs, job)
  local rec = raw and cjson.decode(raw)
  local score = rec and rec.token == tonumber(ARGV[3 * h]) and redis.call('ZSCORE', holds, job)
  -- an expired hold stays expired: reviving it would close a gate the user already saw open
  if score and tonumber(score) > now then
    local expiry = math.min(now + rec.lease_ms, rec.cap_ms)
    redis.call('ZADD', holds, int(expiry), job)
    redis.call('ZADD', KEYS[1], int(expiry), sid .. '\\n' .. job)
    out[h] = 1
  else
    out[h] = 0
  end
end
return out
"""

# KEYS holds, jobs, expiries, finishing · ARGV sid, job, token, channel
_RELEASE = """
local raw = redis.call('HGET', KEYS[2], ARGV[2])
if not raw then return 0 end
if cjson.decode(raw).token ~= tonumber(ARGV[3]) then return -1 end
local member = ARGV[1] .. '\\n' .. ARGV[2]
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[3], member)
redis.call('ZREM', KEYS[4], member)
announce_if_open(KEYS[1], ARGV[4], now_ms())
return 1
"""

# KEYS result, late[, holds, jobs, expiries, finishing] · ARGV job, json, ttl, sid, token,
# channel (the last three empty for a batch job), then the writes that go with an applied result
# (counts, a webhook delivery), each as its argument count and its arguments
_COMPLETE = """
local gated = #KEYS > 2
local member = ARGV[4] .. '\\n' .. ARGV[1]
local rec = false
if gated then
  local raw = redis.call('HGET', KEYS[4], ARGV[1])
  if raw then rec = cjson.decode(raw) end
end
local mine = rec and rec.token == tonumber(ARGV[5])
local function late()
  redis.call('RPUSH', KEYS[2], ARGV[2])
  redis.call('EXPIRE', KEYS[2], ARGV[3])
  return 'late'
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  -- a sweeper's claim is discharged once a result exists, else it would be re-claimed forever
  if mine and rec.claimed_at_ms then
    redis.call('HDEL', KEYS[4], ARGV[1])
    redis.call('ZREM', KEYS[6], member)
  end
  return late()
end
if rec and not mine then return late() end
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
if rec then
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[5], member)
  -- only a hold a sweeper claimed is in the finishing index
  if rec.claimed_at_ms then redis.call('ZREM', KEYS[6], member) end
  announce_if_open(KEYS[3], ARGV[6], now_ms())
end
run_writes(7)
return 'applied'
"""

# KEYS expiries, finishing, token
# ARGV limit, claim_ms, margin_ms, then (prefix, suffix) pairs for holds, jobs and channel
_CLAIM = """
local now = now_ms()
local limit, claim, margin = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
local function name(i, sid) return ARGV[i] .. sid .. ARGV[i + 1] end
local function take(member)
  local nl = string.find(member, '\\n', 1, true)
  local sid, job = string.sub(member, 1, nl - 1), string.sub(member, nl + 1)
  local holds, jobs = name(4, sid), name(6, sid)
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', holds, job)
  local raw = redis.call('HGET', jobs, job)
  if not raw then
    redis.call('ZREM', KEYS[2], member)
    return
  end
  local rec = cjson.decode(raw)
  -- only a first claim keeps the record alive longer: a job no sweeper manages to finish is
  -- re-claimed until its record expires, not forever
  if not rec.claimed_at_ms then extend(jobs, claim + margin) end
  rec.token = new_token(KEYS[3], claim + margin)
  rec.claimed_at_ms = now
  redis.call('HSET', jobs, job, cjson.encode(rec))
  redis.call('ZADD', KEYS[2], int(now + claim), member)
  extend(KEYS[2], claim + margin)
  announce_if_open(holds, name(8, sid), now)
  out[#out + 1] = {sid, job, rec.token, rec.tool_type}
end
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], '-inf', int(now), 'BYSCORE', 'LIMIT', 0, limit)) do
  take(m)
end
if #out < limit then
  local stale = redis.call('ZRANGE', KEYS[2], '-inf', int(now), 'BYSCORE', 'LIMIT', 0, limit - #out)
  for _, m in ipairs(stale) do take(m) end
end
-- holds no sweeper claimed within the margin are forgotten, so the index stays bounded
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. int(now - margin))
return out
"""

# KEYS holds → {live holds, ms until the earliest live hold expires}
_STATE = """
local now = now_ms()
local first = redis.call('ZRANGE', KEYS[1], '(' .. int(now), '+inf', 'BYSCORE', 'LIMIT', 0, 1,
  'WITHSCORES')
if #first == 0 then return {0, 0} end
return {live(KEYS[1], now), tonumber(first[2]) - now}
"""

# KEYS holds, jobs, held → {now_ms, held count, then job, expiry, record per live hold}
_STATUS = """
local now = now_ms()
local out = {now, redis.call('LLEN', KEYS[3])}
local holds = redis.call('ZRANGE', KEYS[1], '(' .. int(now), '+inf', 'BYSCORE', 'WITHSCORES')
for i = 1, #holds, 2 do
  out[#out + 1] = holds[i]
  out[#out + 1] = holds[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], holds[i]) or '{}'
end
return out
"""

# KEYS held, held_bytes · ARGV message, ttl_ms, max_count, max_bytes → the new count, or
# -1 (count full), -2 (bytes full); a refused push changes nothing, its TTL included
_HOLD = """
local n = redis.call('LLEN', KEYS[1])
if n >= tonumber(ARGV[3]) then return -1 end
local size = 0
if n > 0 then size = tonumber(redis.call('GET', KEYS[2]) or '0') end
size = size + #ARGV[1]
if size > tonumber(ARGV[4]) then return -2 end
n = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], size, 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return n
"""

# KEYS holds, held, held_bytes → every held message, oldest first, or {} while the gate is closed
_TAKE = """
if live(KEYS[1], now_ms()) > 0 then return {} end
local items = redis.call('LRANGE', KEYS[2], 0, -1)
redis.call('DEL', KEYS[2], KEYS[3])
return items
"""

SOURCES: dict[str, str] = {
    name: _PRELUDE + body
    for name, body in {
        "close": _CLOSE,
        "enqueue": _ENQUEUE,
        "renew": _RENEW,
        "release": _RELEASE,
        "complete": _COMPLETE,
        "claim": _CLAIM,
        "state": _STATE,
        "status": _STATUS,
        "hold": _HOLD,
        "take": _TAKE,
    }.items()
}
"""Every gate script by name, each with the shared helper prelude."""
