"""The full output behind a summary, read back by its ``output_ref``: ranges or matching lines.

A summarized job's output is already stored by claim check (``tersify.store.payloads``). At enqueue
the producer also writes ``keys.output(ref)``, a small hash naming the job's session and the
payload's digest, with the payload's TTL; the ref (128 random bits, never derived from the
content) travels in the job and comes back on its result. Reading it back is two Redis reads;
a ref that is unknown, expired, or belongs to another session reads as not found.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, Final, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from tersify.client.core import Compute, Operation, Round
from tersify.errors import InvalidJobError, JobNotFoundError
from tersify.store import keys, payloads
from tersify.store.commands import Command, command
from tersify.text.cut import split_lines

DEFAULT_LIMIT: Final = 200
MAX_LIMIT: Final = 10_000
MAX_GREP_CHARS: Final = 1000
REF_PATTERN: Final = r"^[0-9a-f]{32}$"


def new_output_ref() -> str:
    """An unguessable output ref (128 random bits, hex)."""
    return secrets.token_hex(16)


class OutputLine(BaseModel):
    """One line of a full output: its 1-based number and its text (without the newline)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    number: int = Field(ge=1)
    text: str


class OutputRange(BaseModel):
    """Lines read back from a full output: a range, or the lines containing ``grep``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ref: str
    total_lines: int = Field(ge=0)
    lines: tuple[OutputLine, ...]
    grep: str | None = None
    next_offset: int | None = Field(
        None, description="The 0-based line to pass as ``offset`` for more; null at the end."
    )

    @property
    def text(self) -> str:
        """The lines' text joined with newlines."""
        return "\n".join(line.text for line in self.lines)


def stage_output(ref: str, session_id: str, digest: str, ttl: int) -> tuple[Command, Command]:
    """The commands that point ``ref`` at a stored payload."""
    key = keys.output(ref)
    return (
        command("hset", key, mapping={"session_id": session_id, "payload": digest}),
        command("expire", key, ttl),
    )


def check_request(offset: int, limit: int, grep: str | None) -> None:
    """Refuse a read outside the bounds with ``InvalidJobError`` (before touching Redis)."""
    if offset < 0 or not 1 <= limit <= MAX_LIMIT:
        raise InvalidJobError(f"offset must be >= 0 and limit within 1..{MAX_LIMIT}")
    if grep is not None and not 1 <= len(grep) <= MAX_GREP_CHARS:
        raise InvalidJobError(f"grep must be 1..{MAX_GREP_CHARS} characters")


def window(ref: str, text: str, offset: int, limit: int, grep: str | None) -> OutputRange:
    """Lines ``offset``.. of ``text``: the next ``limit`` of them, or of those containing ``grep``.

    ``grep`` is a fixed string matched case-insensitively (never a regular expression, so no
    pattern can make a read slow).
    """
    lines = split_lines(text)
    picked: list[OutputLine] = []
    index = offset
    needle = grep.casefold() if grep is not None else None
    while index < len(lines) and len(picked) < limit:
        if needle is None or needle in lines[index].casefold():
            picked.append(OutputLine(number=index + 1, text=lines[index]))
        index += 1
    more = index < len(lines) and (
        needle is None or any(needle in line.casefold() for line in lines[index:])
    )
    return OutputRange(
        ref=ref,
        total_lines=len(lines),
        lines=tuple(picked),
        grep=grep,
        next_offset=index if more else None,
    )


def _as_str(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


Allows = Callable[[str], bool]
"""Whether a caller may read an output of the given session."""


class Lookup(TypedDict, total=False):
    """Which lines of an output to read, and for whom: those containing ``grep`` (a fixed
    string, case-insensitive), of an output of ``session_id`` (an id, or a predicate over ids:
    another session's output reads as not found)."""

    grep: str | None
    session_id: str | Allows | None


def only(session: str | Allows | None) -> Allows | None:
    """An ``Allows`` from a session id (exactly that one), a predicate, or None (any session)."""
    return session.__eq__ if isinstance(session, str) else session


def _owned_digest(ref: str, stored: list[Any], allows: Allows | None) -> str:
    owner, digest = stored
    if digest is None or (allows is not None and not allows(_as_str(owner))):
        raise JobNotFoundError(f"no output {ref!r} (unknown, expired, or another session's)")
    return _as_str(digest)


def read_output(
    ref: str,
    offset: int = 0,
    limit: int = DEFAULT_LIMIT,
    *,
    grep: str | None = None,
    allows: Allows | None = None,
) -> Operation[OutputRange]:
    """Read lines of the full output ``ref`` points at (``allows``: whose session may be read).

    ``JobNotFoundError`` for an unknown or expired ref, ``InvalidJobError`` for a bad range.
    The client must not decode responses (payloads are bytes).
    """
    check_request(offset, limit, grep)
    failure = "could not read the output"
    pointer = (command("hmget", keys.output(ref), ["session_id", "payload"]),)
    digest = _owned_digest(ref, (yield Round(pointer, failure))[0], allows)
    (blob,) = yield Round((command("get", keys.payload(digest)),), failure)
    if blob is None:
        raise JobNotFoundError(f"no output {ref!r} (expired)")
    found: OutputRange = yield Compute(_window_of_blob, (ref, blob, offset, limit, grep))
    return found


def _window_of_blob(
    ref: str, blob: bytes, offset: int, limit: int, grep: str | None
) -> OutputRange:
    """``window`` over a stored payload, decoded first (both CPU work on a large output)."""
    return window(ref, payloads.decode(blob), offset, limit, grep)
