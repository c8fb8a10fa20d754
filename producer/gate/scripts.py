"""The session gate's Lua scripts: every change of gate state is one of these, run atomically.

A session's gate lives in its hash (``keys.session``, field ``gate``) as one JSON object: the
last fencing token handed out (``n``) and the holds by job id (``h``). A hold keeps its token
``t``, expiry ``e``, cap ``c``, lease ``l`` (ms), tool type ``y``, when it closed (``a``), when
its record goes (``x``: cap plus margin, or a first claim plus margin) and, once a sweeper
claimed it, when (``k``) and until when (``u``). Times are Redis server milliseconds (``TIME``),
so the clocks of producer and worker hosts never matter. A hold is *live* while it is unclaimed
and its expiry is ahead; the gate of a session is open when it has no live hold. Tokens grow
within a session; a job's token changes only when a sweeper claims its hold.

One index spans sessions: ``keys.gate_due`` names each session while it holds something,
scored at or before the first moment one of its holds may need the sweeper (an expiry or a
claim's end). A session's first hold adds it, a hold that would be due before the others
lowers it (``ZADD LT``); a renewal, which only pushes expiries later, leaves it; the last hold
to go removes it; the sweeper's ``claim`` visits every session it scores as due, takes over
what expired and scores the session again. The index has no TTL: it names exactly the
sessions with holds.

``enqueue`` and ``complete`` also run the writes their callers pass in ARGV (a job's record,
payloads, index and output link; a result's run record) in the same atomic step; ``claim``
builds per-session key names from templates passed in ARGV: fine on a single Redis and under
Sentinel, not on Cluster.
"""

from __future__ import annotations

from tersify.store.payloads import STAGE
from tersify.store.records import OWNER

_PRELUDE = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function int(x) return string.format('%d', x) end
local function gate_of(raw)
  if not raw then return {n = 0, h = {}} end
  return cjson.decode(raw)
end
local function live(g, now)
  local n, first = 0, nil
  for _, r in pairs(g.h) do
    if not r.k and r.e > now then
      n = n + 1
      if not first or r.e < first then first = r.e end
    end
  end
  return n, first
end
-- the first moment a hold of the session may need the sweeper (nil: it holds nothing)
local function due(g)
  local d = nil
  for _, r in pairs(g.h) do
    local at = r.u or r.e
    if not d or at < d then d = at end
  end
  return d
end
-- holds whose record outlived every use are forgotten; whether any was
local function prune(g, now)
  local gone = false
  for job, r in pairs(g.h) do
    if r.x <= now then
      g.h[job] = nil
      gone = true
    end
  end
  return gone
end
-- ARGV from index i on: writes, each its argument count and then its arguments
local function run_writes(i)
  while i <= #ARGV do
    local n = tonumber(ARGV[i])
    redis.call(unpack(ARGV, i + 1, i + n))
    i = i + n + 1
  end
end
-- the hold of job in gate g → its fencing token, and whether it is new
local function close_hold(g, job, now, lease, cap, tool_type, margin)
  local r = g.h[job]
  if r then return r.t, false end
  g.n = g.n + 1
  local c = now + cap
  g.h[job] = {t = g.n, e = math.min(now + lease, c), c = c, l = lease, y = tool_type, a = now,
    x = c + margin}
  return g.n, true
end
-- ARGV 1-9: sid, job, gated (1|0), lease_ms, cap_ms, tool type, margin_ms, the session hash's
-- TTL and slack (ms). Holds the gate for job when gated, writes the session's hash (``set``:
-- field, value pairs, its TTL only when it runs low) → the job's token, 0 without a hold
local function hold_in(sess, due_key, set)
  local sid, job = ARGV[1], ARGV[2]
  local got = redis.call('HMGET', sess, 'gate', 'exp')
  local now = now_ms()
  local token = 0
  if ARGV[3] == '1' then
    local g = gate_of(got[1])
    local fresh
    token, fresh = close_hold(g, job, now, tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6],
      tonumber(ARGV[7]))
    if fresh then
      local hold = g.h[job]
      g.h[job] = nil
      prune(g, now)
      -- a session already holding something is indexed at or before its first due moment
      local before = due(g)
      g.h[job] = hold
      set[#set + 1] = 'gate'
      set[#set + 1] = cjson.encode(g)
      if not before or before > hold.e then
        redis.call('ZADD', due_key, 'LT', int(hold.e), sid)
      end
    end
  end
  local ttl, slack = tonumber(ARGV[8]), tonumber(ARGV[9])
  local low = not got[2] or tonumber(got[2]) < now + ttl
  if low then
    set[#set + 1] = 'exp'
    set[#set + 1] = int(now + ttl + slack)
  end
  if #set > 0 then redis.call('HSET', sess, unpack(set)) end
  if low then
    -- a hash with no exp yet is mostly new (no TTL), one with a stale exp has a TTL
    local first, second = 'NX', 'GT'
    if got[2] then first, second = 'GT', 'NX' end
    if redis.call('PEXPIRE', sess, int(ttl + slack), first) == 0 then
      redis.call('PEXPIRE', sess, int(ttl + slack), second)
    end
  end
  return token
end
-- store gate g (a hold of it just went) and, when a waiter asked (``w``, the session hash's
-- field ``waiting``), announce the gate open once no hold it keeps can hold it shut: none left,
-- or only holds a sweeper claimed. One left unclaimed is live, or expired unannounced (its
-- worker died) and then opened the gate already: a waiter wakes at the earliest expiry it saw
-- and re-reads at least every second. No TIME is read here; what outlived its record is pruned
-- by the next hold and by the sweeper. An announcement clears the ask.
local function settle(sess, due_key, g, sid, channel, w)
  local open = next(g.h) == nil
  if open then
    redis.call('ZREM', due_key, sid)
  else
    open = true
    for _, r in pairs(g.h) do
      if not r.k then open = false break end
    end
  end
  if open and w and w ~= '' then
    redis.call('HSET', sess, 'gate', cjson.encode(g), 'waiting', '')
    redis.call('PUBLISH', channel, 'open')
  else
    redis.call('HSET', sess, 'gate', cjson.encode(g))
  end
end
"""

# KEYS session, due · ARGV 1-9 (``hold_in``) → the fencing token
_CLOSE = """
return hold_in(KEYS[1], KEYS[2], {})
"""

# KEYS record, session, due, then each payload and its users' set · ARGV 1-9 (``hold_in``),
# 10 record, 11 record TTL (s), 12 payload TTL (s), 13 payload count P, then P blobs, then the
# index field count F, F fields, then the writes, each as its argument count and its arguments
# → the job's gate token, 0 when it holds no gate (batch), -1 when the job id is another
# session's (nothing is written then). A job is stored, indexed and holds its gate in one step.
_ENQUEUE = (
    STAGE
    + OWNER
    + """
local sid = ARGV[1]
if not redis.call('SET', KEYS[1], ARGV[10], 'NX', 'EX', ARGV[11]) then
  local owner = record_owner(KEYS[1])
  if owner and owner ~= sid then return -1 end
end
local p = tonumber(ARGV[13])
for i = 1, p do stage_payload(KEYS[2 + 2 * i], KEYS[3 + 2 * i], ARGV[13 + i], sid, ARGV[12]) end
local f = tonumber(ARGV[14 + p])
local set = {}
for i = 1, f do
  set[#set + 1] = ARGV[14 + p + i]
  set[#set + 1] = ''
end
run_writes(15 + p + f)
return hold_in(KEYS[2], KEYS[3], set)
"""
)

# KEYS each hold's session hash · ARGV sid, job, token of each hold → 1 per hold renewed, 0 per
# hold lost (one call renews every hold a worker process has). An expired hold stays expired:
# reviving it would close a gate the user already saw open.
_RENEW = """
local now = now_ms()
local gates, dirty, out = {}, {}, {}
for h = 1, #KEYS do
  local key = KEYS[h]
  local g = gates[key]
  if g == nil then
    g = gate_of(redis.call('HGET', key, 'gate'))
    gates[key] = g
  end
  local r = g.h[ARGV[3 * h - 1]]
  if r and r.t == tonumber(ARGV[3 * h]) and not r.k and r.e > now then
    r.e = math.min(now + r.l, r.c)
    dirty[key] = true
    out[h] = 1
  else
    out[h] = 0
  end
end
for key in pairs(dirty) do redis.call('HSET', key, 'gate', cjson.encode(gates[key])) end
return out
"""

# KEYS session, due · ARGV sid, job, token, channel → 1 released, 0 no such hold, -1 stale token
_RELEASE = """
local got = redis.call('HMGET', KEYS[1], 'gate', 'waiting')
local g = gate_of(got[1])
local r = g.h[ARGV[2]]
if not r then return 0 end
if r.t ~= tonumber(ARGV[3]) then return -1 end
g.h[ARGV[2]] = nil
settle(KEYS[1], KEYS[2], g, ARGV[1], ARGV[4], got[2])
return 1
"""

# KEYS progress, result, late[, session, due] · ARGV job, json, ttl, sid, token, channel (the
# three before last empty for a batch job), taken (1: the caller is the worker that took the
# job), then the writes that go with an applied result (a run's record), each as its argument
# count and its arguments. The result list's length says whether a result was there already
# (a second one is taken back off and kept as late). Any caller but the worker that took the
# job marks the job done, so a worker yet to take it skips it; that worker's own mark stays
# ``T``, and a redelivery of its message finds the result (the take script).
_COMPLETE = """
local job = ARGV[1]
local g, rec, mine, waiting = nil, nil, false, nil
if #KEYS > 3 then
  local got = redis.call('HMGET', KEYS[4], 'gate', 'waiting')
  g, waiting = gate_of(got[1]), got[2]
  rec = g.h[job]
  mine = rec ~= nil and rec.t == tonumber(ARGV[5])
end
local function late()
  redis.call('RPUSH', KEYS[3], ARGV[2])
  redis.call('EXPIRE', KEYS[3], ARGV[3])
  return 'late'
end
if rec and not mine then return late() end
if ARGV[7] ~= '1' then redis.call('SET', KEYS[1], 'D', 'EX', ARGV[3]) end
local done = redis.call('RPUSH', KEYS[2], ARGV[2]) > 1
if done then
  redis.call('RPOP', KEYS[2])
else
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
-- the hold goes with the result; a sweeper's claim goes once any result exists, else it would
-- be claimed again and again
if rec and (not done or rec.k) then
  g.h[job] = nil
  settle(KEYS[4], KEYS[5], g, ARGV[4], ARGV[6], waiting)
end
if done then return late() end
run_writes(8)
return 'applied'
"""

# KEYS due · ARGV limit, claim_ms, margin_ms, then (prefix, suffix) pairs for the session hash
# and the channel → {sid, job, token, tool type} of each hold claimed
_CLAIM = """
local now = now_ms()
local limit, claim, margin = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
local due_now = redis.call('ZRANGE', KEYS[1], '-inf', int(now), 'BYSCORE', 'LIMIT', 0, limit)
for _, sid in ipairs(due_now) do
  if #out >= limit then break end
  local sess = ARGV[4] .. sid .. ARGV[5]
  local raw = redis.call('HGET', sess, 'gate')
  local g = gate_of(raw)
  local changed = prune(g, now)
  local took = false
  for job, r in pairs(g.h) do
    if #out < limit and (r.u or r.e) <= now then
      -- only a first claim keeps the record alive longer: a job no sweeper manages to finish
      -- is claimed again until its record goes, not forever
      if not r.k then r.x = math.max(r.x, now + claim + margin) end
      g.n = g.n + 1
      r.t, r.k, r.u = g.n, now, now + claim
      out[#out + 1] = {sid, job, r.t, r.y}
      took = true
    end
  end
  if raw and (changed or took) then redis.call('HSET', sess, 'gate', cjson.encode(g)) end
  local d = due(g)
  if d then redis.call('ZADD', KEYS[1], int(d), sid) else redis.call('ZREM', KEYS[1], sid) end
  if took and live(g, now) == 0 then redis.call('PUBLISH', ARGV[6] .. sid .. ARGV[7], 'open') end
end
return out
"""

# KEYS session · ARGV [w: a waiter subscribed to the gate's events asks for the opening to be
# announced] → {live holds, ms until the earliest live hold expires}
_STATE = """
local now = now_ms()
local got = redis.call('HMGET', KEYS[1], 'gate', 'waiting')
local n, first = live(gate_of(got[1]), now)
if n == 0 then return {0, 0} end
if ARGV[1] == 'w' and (not got[2] or got[2] == '') then
  redis.call('HSET', KEYS[1], 'waiting', '1')
end
return {n, first - now}
"""

# KEYS session, held → {now_ms, held count, then job, expiry, record per live hold}
_STATUS = """
local now = now_ms()
local g = gate_of(redis.call('HGET', KEYS[1], 'gate'))
local out = {now, redis.call('LLEN', KEYS[2])}
for job, r in pairs(g.h) do
  if not r.k and r.e > now then
    out[#out + 1] = job
    out[#out + 1] = r.e
    out[#out + 1] = cjson.encode({token = r.t, tool_type = r.y, closed_at_ms = r.a})
  end
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

# KEYS session, held, held_bytes → every held message, oldest first, or {} while the gate is
# closed
_TAKE = """
if live(gate_of(redis.call('HGET', KEYS[1], 'gate')), now_ms()) > 0 then return {} end
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
