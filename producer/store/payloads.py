"""Tool outputs travel by claim check: stored once in Redis under their content hash.

Broker messages stay small (a key, not megabytes), identical outputs share one copy, and the
worker's sweeper can still build a fallback from a job whose worker died. Large payloads are
zlib-compressed when that saves at least a tenth.

A stored payload starts with a tag of the session that first stored it (its owner: 16 hex
digits of the SHA-1 of its id, never the id). The first store is one command (``SET … NX``);
only a payload stored again learns who uses it: the other session and its owner's tag then go
into ``keys.payload_sessions``, which lives as long as the payload. Forgetting a session
(``RELEASE``) deletes a payload no other session uses (the users' set when there is one, else
the owner, says which), and blanks its tag in one that another session still uses. Payloads
stored before the owner was written (no tag) are read alike; their users' set names every
session that stored them.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import Final

from tersify.errors import InvalidJobError
from tersify.store import keys
from tersify.store.commands import Command, command

_RAW = b"r"
_ZLIB = b"z"
_OWNED = b"o"  # then the owner's tag, then a tagged body
_TAG = 16
COMPRESS_FROM_BYTES = 64 * 1024

# Lua: a session's tag, and the tag a payload's first bytes (``GETRANGE key 0 16``) name (nil
# for one stored before owners were written; blank once its owner was forgotten).
_OWNER = f"""
local function owner_tag(sid) return string.sub(redis.sha1hex(sid), 1, {_TAG}) end
local function payload_owner(head)
  if string.sub(head, 1, 1) ~= 'o' then return nil end
  return string.sub(head, 2, {_TAG + 1})
end
local BLANK = string.rep('-', {_TAG})
"""

STAGE: Final = (
    _OWNER
    + """
-- Store a payload for ttl seconds, or refresh it; a session storing another's payload joins
-- its users (with the owner's tag), whose set then lives as long as the payload.
local function stage_payload(key, users, blob, sid, ttl)
  if redis.call('SET', key, blob, 'NX', 'EX', ttl) then return end
  redis.call('EXPIRE', key, ttl)
  local owner = payload_owner(redis.call('GETRANGE', key, 0, 16))
  if owner ~= owner_tag(sid) then
    redis.call('SADD', users, sid)
    if owner and owner ~= BLANK then redis.call('SADD', users, '#' .. owner) end
  end
  redis.call('EXPIRE', users, ttl)
end
"""
)
"""The Lua function every payload write runs (the job scripts include it)."""

_STAGE_ONE = STAGE + "stage_payload(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])\n"

RELEASE: Final = (
    _OWNER
    + """
-- KEYS payload, its users · ARGV session: the session stops using the payload, which goes once
-- no session uses it. Returns how many keys were deleted.
local shared = redis.call('EXISTS', KEYS[2]) == 1
local mine = owner_tag(ARGV[1])
redis.call('SREM', KEYS[2], ARGV[1], '#' .. mine)
local owner = payload_owner(redis.call('GETRANGE', KEYS[1], 0, 16))
if redis.call('SCARD', KEYS[2]) > 0 then
  if owner == mine then redis.call('SETRANGE', KEYS[1], 1, BLANK) end
  return 0
end
if not shared and owner and owner ~= mine then return 0 end
return redis.call('DEL', KEYS[1], KEYS[2])
"""
)
"""The script forgetting runs for each payload a session used."""


def owner_tag(session_id: str) -> bytes:
    """The tag a payload stored first by ``session_id`` starts with."""
    digest = hashlib.sha1(session_id.encode("utf-8"), usedforsecurity=False).hexdigest()
    return digest[:_TAG].encode()


def clean_output(output: object) -> tuple[str, bool]:
    """Return the output as valid text and whether bytes had to be replaced to make it so.

    Accepts ``str`` or ``bytes``; invalid UTF-8 and lone surrogates become U+FFFD. Raises
    ``InvalidJobError`` for other types.
    """
    if isinstance(output, bytes | bytearray | memoryview):
        raw = bytes(output)
        try:
            return raw.decode("utf-8"), False
        except UnicodeDecodeError:
            return raw.decode("utf-8", errors="replace"), True
    if not isinstance(output, str):
        raise InvalidJobError(f"output must be str or bytes, not {type(output).__name__}")
    try:
        output.encode("utf-8")
    except UnicodeEncodeError:
        return _replace_surrogates(output), True
    return output, False


def _replace_surrogates(text: str) -> str:
    return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)


def encode(text: str, owner: str | None = None) -> tuple[str, bytes]:
    """Return ``(digest, stored bytes)`` for an output; ``owner`` is the session storing it
    (None: the form stored before owners were written, still read)."""
    raw = text.encode("utf-8")
    digest = hashlib.sha256(raw).hexdigest()
    head = b"" if owner is None else _OWNED + owner_tag(owner)
    if len(raw) >= COMPRESS_FROM_BYTES:
        packed = zlib.compress(raw, 1)
        if len(packed) <= len(raw) * 0.9:
            return digest, b"".join((head, _ZLIB, packed))
    return digest, b"".join((head, _RAW, raw))


def decode(blob: object) -> str:
    """Turn stored bytes back into the output text."""
    if not isinstance(blob, bytes):
        raise InvalidJobError("stored payload is not bytes (read it with decode_responses=False)")
    start = 1 + _TAG if blob[:1] == _OWNED else 0
    tag, body = blob[start : start + 1], memoryview(blob)[start + 1 :]
    if tag == _ZLIB:
        return zlib.decompress(body).decode("utf-8")
    if tag == _RAW:
        return str(body, "utf-8")
    raise InvalidJobError("stored payload has an unknown encoding tag")


def stage(session_id: str, digest: str, blob: bytes, ttl: int) -> Command:
    """The command that stores ``session_id``'s payload for ``ttl`` seconds, or refreshes it
    (``blob`` from ``encode(text, session_id)``; the job scripts run ``STAGE`` themselves)."""
    users = keys.payload_sessions(digest)
    return command("eval", _STAGE_ONE, 2, keys.payload(digest), users, blob, session_id, ttl)
