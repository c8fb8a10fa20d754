"""Tool outputs travel by claim check: stored once in Redis under their content hash.

Broker messages stay small (a key, not megabytes), identical outputs share one copy, and the
worker's sweeper can still build a fallback from a job whose worker died. Large payloads are
zlib-compressed when that saves at least a tenth.
"""

from __future__ import annotations

import hashlib
import zlib

from tersify.errors import InvalidJobError
from tersify.store import keys
from tersify.store.commands import Command, command

_RAW = b"r"
_ZLIB = b"z"
COMPRESS_FROM_BYTES = 64 * 1024


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


def encode(text: str) -> tuple[str, bytes]:
    """Return ``(digest, stored bytes)`` for an output."""
    raw = text.encode("utf-8")
    digest = hashlib.sha256(raw).hexdigest()
    if len(raw) >= COMPRESS_FROM_BYTES:
        packed = zlib.compress(raw, 1)
        if len(packed) <= len(raw) * 0.9:
            return digest, _ZLIB + packed
    return digest, _RAW + raw


def decode(blob: object) -> str:
    """Turn stored bytes back into the output text."""
    if not isinstance(blob, bytes):
        raise InvalidJobError("stored payload is not bytes (read it with decode_responses=False)")
    tag, body = blob[:1], blob[1:]
    if tag == _ZLIB:
        return zlib.decompress(body).decode("utf-8")
    if tag == _RAW:
        return body.decode("utf-8")
    raise InvalidJobError("stored payload has an unknown encoding tag")


def stage(digest: str, blob: bytes, ttl: int) -> tuple[Command]:
    """The command that stores a payload for ``ttl`` seconds (written again, TTL and all, when
    the same output is stored twice: the digest names the content)."""
    return (command("set", keys.payload(digest), blob, ex=ttl),)
