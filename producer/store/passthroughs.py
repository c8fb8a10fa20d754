"""Passthrough outputs waiting in Redis for the session log, bounded in bytes and in time.

A passthrough never reaches a worker as a job, so the producer stores the output and its result
under ``keys.passthrough_entry(job_id)`` (with the payload TTL, named in the session's index so
forgetting deletes it) and pushes the job id onto ``keys.PASSTHROUGH_LOG``. The entries' sizes
are kept beside them (``keys.PASSTHROUGH_SIZES``, summed in ``keys.PASSTHROUGH_BYTES``): past
``TERSIFY_SESSION_LOG_PENDING_MAX_BYTES`` the oldest waiting entries go, so no number of large
passthroughs can fill Redis. A worker's chore (``tersify.worker.store.passthroughs``) takes ids,
writes their entries to the session log, and ``DONE_SCRIPT`` releases them.
"""

from __future__ import annotations

from typing import Final

from tersify.store import keys, sessions
from tersify.store.commands import Command, command

# KEYS list, sizes, bytes, entry · ARGV job id, entry, ttl_s, max bytes, entry key prefix.
PUSH_SCRIPT: Final = """
local size = string.len(ARGV[2])
local most = tonumber(ARGV[4])
if size > most or redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
redis.call('SET', KEYS[4], ARGV[2], 'EX', tonumber(ARGV[3]))
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], size)
local total = redis.call('INCRBY', KEYS[3], size)
while total > most do
  local old = redis.call('RPOP', KEYS[1])
  if not old then break end
  local was = tonumber(redis.call('HGET', KEYS[2], old) or '0')
  redis.call('HDEL', KEYS[2], old)
  redis.call('DEL', ARGV[5] .. old)
  total = redis.call('DECRBY', KEYS[3], was)
end
for i = 1, 3 do redis.call('EXPIRE', KEYS[i], tonumber(ARGV[3])) end
return 1
"""

# KEYS sizes, bytes, in-flight set · ARGV entry key prefix, job ids…: entries written (or
# unreadable, or gone): their sizes, claims and stored texts go.
DONE_SCRIPT: Final = """
for i = 2, #ARGV do
  local id = ARGV[i]
  local was = tonumber(redis.call('HGET', KEYS[1], id) or '0')
  redis.call('HDEL', KEYS[1], id)
  if was > 0 then redis.call('DECRBY', KEYS[2], was) end
  redis.call('ZREM', KEYS[3], id)
  redis.call('DEL', ARGV[1] .. id)
end
return #ARGV - 1
"""


def stage(
    session_id: str, job_id: str, entry: bytes, ttl_seconds: int, max_bytes: int
) -> tuple[Command, ...]:
    """The commands that queue ``entry`` (a job and its passthrough result) for the session log."""
    key = keys.passthrough_entry(job_id)
    push = command(
        "eval",
        PUSH_SCRIPT,
        4,
        keys.PASSTHROUGH_LOG,
        keys.PASSTHROUGH_SIZES,
        keys.PASSTHROUGH_BYTES,
        key,
        job_id,
        entry,
        str(ttl_seconds),
        str(max_bytes),
        keys.passthrough_entry(""),
    )
    return (push, *sessions.index_keys(session_id, (key,), ttl_seconds))


def done(job_ids: list[str]) -> Command:
    """The command that releases entries the session log has (or will never have)."""
    return command(
        "eval",
        DONE_SCRIPT,
        3,
        keys.PASSTHROUGH_SIZES,
        keys.PASSTHROUGH_BYTES,
        keys.PASSTHROUGH_LOGGING,
        keys.passthrough_entry(""),
        *job_ids,
    )
