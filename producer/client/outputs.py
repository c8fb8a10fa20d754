"""The full output behind a summary, read back by its ``output_ref``: ranges or matching lines.

A summarized job's output is already stored by claim check (``tersify.store.payloads``). At enqueue
the producer also writes ``keys.output(ref)``, a small JSON string naming the job's session, the
payload's digest, the job and its tool type, with the payload's TTL (links written before were
hashes, and are read alike); the ref (128 random bits, never derived from the content) travels
in the job and comes back on its result. Reading it back is two Redis round trips; a ref that
is unknown, expired, or belongs to another session reads as not found. A read that succeeds
is then counted against the job (``client.rereads``): every face and tool reads through this
one operation, so every read is counted once.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from itertools import islice
from typing import Any, Final, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from tersify.client import rereads
from tersify.client.core import Compute, Operation, Round
from tersify.errors import InvalidJobError, JobNotFoundError, RedisUnavailableError
from tersify.settings import Settings
from tersify.store import keys, payloads
from tersify.store.commands import Command, command
from tersify.text.cut import split_lines

DEFAULT_LIMIT: Final = 200
MAX_LIMIT: Final = 10_000
MAX_GREP_CHARS: Final = 1000
REF_PATTERN: Final = r"^[0-9a-f]{32}$"
MAX_OFFSET: Final = 2**31
"""The largest ``offset`` a read takes (an output has fewer lines by far)."""
SLICE_CHARS: Final = 1 << 20


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


_LINK: Final = ("session_id", "payload", "job_id", "tool_type")

# KEYS link → its session, payload, job and tool type (a link of either form), or nil
_READ_LINK: Final = """
local ok, value = pcall(redis.call, 'GET', KEYS[1])
if not ok then return redis.call('HMGET', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]) end
if not value then return {false, false, false, false} end
local link = cjson.decode(value)
return {link.session_id or false, link.payload or false, link.job_id or false,
  link.tool_type or false}
"""


def stage_output(
    ref: str,
    session_id: str,
    digest: str,
    ttl: int,
    *,
    job_id: str | None,
    tool_type: str | None,
) -> Command:
    """The command that points ``ref`` at a stored payload and the job summarizing it (None: a
    link that names no job, whose reads are not counted)."""
    link = {"session_id": session_id, "payload": digest}
    if job_id is not None and tool_type is not None:
        link |= {"job_id": job_id, "tool_type": tool_type}
    return command("set", keys.output(ref), json.dumps(link), ex=ttl)


def read_link(ref: str) -> Command:
    """The command that reads ``ref``'s link: its session, payload, job and tool type (each
    None when absent)."""
    return command("eval", _READ_LINK, 1, keys.output(ref), *_LINK)


def check_request(offset: int, limit: int, grep: str | None) -> None:
    """Refuse a read outside the bounds with ``InvalidJobError`` (before touching Redis)."""
    if not 0 <= offset <= MAX_OFFSET or not 1 <= limit <= MAX_LIMIT:
        raise InvalidJobError(f"offset must be within 0..{MAX_OFFSET} and limit 1..{MAX_LIMIT}")
    if grep is not None and not 1 <= len(grep) <= MAX_GREP_CHARS:
        raise InvalidJobError(f"grep must be 1..{MAX_GREP_CHARS} characters")


def window(ref: str, text: str, offset: int, limit: int, grep: str | None) -> OutputRange:
    """Lines ``offset``.. of ``text``: the next ``limit`` of them, or of those containing ``grep``.

    ``grep`` is a fixed string matched case-insensitively (never a regular expression, so no
    pattern can make a read slow), by searches over the whole case-folded text rather than a
    loop over its lines: a 16 MiB output is scanned in tens of milliseconds, a slice of about a
    MiB at a time so that a thread doing it never holds the interpreter for long.
    """
    lines = [line for part in _slices(text) for line in split_lines(part)]
    if grep is None:
        numbers = list(range(offset, min(offset + limit, len(lines))))
        more = offset + limit < len(lines)
    else:
        found = list(islice(_holding(text, grep.casefold(), offset), limit + 1))
        numbers, more = found[:limit], len(found) > limit
    return OutputRange(
        ref=ref,
        total_lines=len(lines),
        lines=tuple(OutputLine(number=n + 1, text=lines[n]) for n in numbers),
        grep=grep,
        next_offset=numbers[-1] + 1 if more else None,
    )


def _slices(text: str) -> Iterator[str]:
    """``text`` in slices of about ``SLICE_CHARS`` that end at a newline; between two, other
    threads run (an event loop sharing the process answers its clients meanwhile)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start + SLICE_CHARS)
        end = len(text) if end == -1 else end + 1
        yield text[start:end]
        start = end
        time.sleep(0)  # lets the interpreter switch threads


def _holding(text: str, needle: str, first: int) -> Iterator[int]:
    """The indices of the lines of ``text`` from ``first`` on whose case-folded text holds
    ``needle`` (case-folded): a line never contains a newline, so neither does a match."""
    if "\n" in needle:
        return
    # one line of it for each line of the text, in the same order
    folded = "".join(part.casefold() for part in _slices(text))
    head = folded.split("\n", first) if first else [folded]
    if len(head) <= first:
        return  # ``first`` is past the last line
    start, line = len(folded) - len(head[-1]), first
    while (at := folded.find(needle, start)) != -1:
        line += folded.count("\n", start, at)
        yield line
        end = folded.find("\n", at)
        if end == -1:
            return
        start, line = end + 1, line + 1


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
    settings: Settings,
    ref: str,
    offset: int = 0,
    limit: int = DEFAULT_LIMIT,
    *,
    grep: str | None = None,
    allows: Allows | None = None,
) -> Operation[OutputRange]:
    """Read lines of the full output ``ref`` points at (``allows``: whose session may be read),
    and count the read against the job that summarized it.

    ``JobNotFoundError`` for an unknown or expired ref, ``InvalidJobError`` for a bad range.
    The client must not decode responses (payloads are bytes).
    """
    check_request(offset, limit, grep)
    failure = "could not read the output"
    stored = (yield Round((read_link(ref),), failure))[0]
    digest = _owned_digest(ref, stored[:2], allows)
    job_id = _as_str(stored[2]) if stored[2] is not None else None
    reads = [command("get", keys.payload(digest))]
    if job_id is not None:
        reads.append(command("lindex", keys.result(job_id), 0))
    replies = yield Round(tuple(reads), failure)
    if replies[0] is None:
        raise JobNotFoundError(f"no output {ref!r} (expired)")
    found: OutputRange = yield Compute(_window_of_blob, (ref, replies[0], offset, limit, grep))
    # a read that found nothing (a grep without a match, an offset past the end) read nothing
    # back; a link staged before reads were counted names no job
    if job_id is not None and found.lines:
        kind = rereads.summary_kind(stored[3], replies[1])
        counting = rereads.count(settings, job_id, kind)
        if settings.keep_read_lines:
            counting += rereads.keep_lines(settings, job_id, _as_str(stored[0]), found, kind)
        with suppress(RedisUnavailableError):  # the lines matter more than the count
            yield Round(counting, "could not count the read")
    return found


def _window_of_blob(
    ref: str, blob: bytes, offset: int, limit: int, grep: str | None
) -> OutputRange:
    """``window`` over a stored payload, decoded first (both CPU work on a large output)."""
    return window(ref, payloads.decode(blob), offset, limit, grep)
