"""Fault behaviours of the fake model server, and what it records of each request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Ok:
    """Answer normally, after ``latency`` seconds on top of the server's own latency."""

    text: str | None = None
    latency: float = 0.0


@dataclass(frozen=True, slots=True)
class Status:
    """Answer with an HTTP error in the API's own error format."""

    code: int
    retry_after: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class Malformed:
    """Answer 200 with a body that is not JSON."""


@dataclass(frozen=True, slots=True)
class Empty:
    """Answer 200 in the right shape with empty text."""


@dataclass(frozen=True, slots=True)
class Oversized:
    """Answer 200 with ``chars`` characters of text."""

    chars: int


@dataclass(frozen=True, slots=True)
class Hang:
    """Read the request, answer nothing, and close the connection after ``seconds``."""

    seconds: float


@dataclass(frozen=True, slots=True)
class CloseMidBody:
    """Send the headers with the full Content-Length and half the body, then close."""


@dataclass(frozen=True, slots=True)
class SlowDrip:
    """Send the headers at once, then a valid body a few bytes at a time over ``total_seconds``."""

    total_seconds: float


@dataclass(frozen=True, slots=True)
class Raw:
    """Answer with exactly this status and body (shapes the named behaviours do not cover)."""

    body: bytes
    code: int = 200


@dataclass(frozen=True, slots=True)
class ToolCall:
    """Answer with a call of the tool ``name`` on ``input`` (after ``text``, when given)."""

    name: str
    input: dict[str, Any]
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Structured:
    """Answer with this JSON value as the structured answer the request asked for (a forced
    tool call's input, a ``response_format`` JSON content), valid for it or not."""

    data: Any


@dataclass(frozen=True, slots=True)
class Verbatim:
    """Answer with exactly this text as the model's text, whatever format was asked for (a model
    or server that ignored it, an answer cut off mid-JSON)."""

    text: str


@dataclass(frozen=True, slots=True)
class Quoting:
    """Answer as a model that quotes its evidence: ``prose`` in each of ``fields``, and as
    ``quotes`` the numbers of the numbered lines shown (``N|line``, ``N#HH|line``) whose text
    matches ``pattern`` (consecutive ones as one range, 16 ranges at most)."""

    pattern: str
    prose: str = "The lines quoted are the evidence."
    fields: tuple[str, ...] = ("summary",)
    latency: float = 0.0


Behaviour = (
    Ok
    | Quoting
    | Status
    | Malformed
    | Empty
    | Oversized
    | Hang
    | CloseMidBody
    | SlowDrip
    | Raw
    | Structured
    | Verbatim
    | ToolCall
)


def ok(text: str | None = None, latency: float = 0.0) -> Behaviour:
    """A normal answer: ``text``, or the default summary of the request."""
    return Ok(text, latency)


def quoting(
    pattern: str,
    prose: str = "The lines quoted are the evidence.",
    fields: tuple[str, ...] = ("summary",),
    latency: float = 0.0,
) -> Behaviour:
    """An answer quoting the shown lines that match ``pattern`` (a regular expression)."""
    return Quoting(pattern, prose, fields, latency)


def status(code: int, retry_after: float | None = None, message: str | None = None) -> Behaviour:
    """An HTTP error; a 429 with ``retry_after`` also sends a ``retry-after`` header."""
    return Status(code, retry_after, message)


def malformed() -> Behaviour:
    """A 200 whose body is not JSON."""
    return Malformed()


def empty() -> Behaviour:
    """A 200 with a valid shape and empty text."""
    return Empty()


def oversized(chars: int = 100_000) -> Behaviour:
    """A 200 with a very long text."""
    return Oversized(chars)


def hang(seconds: float = 3600.0) -> Behaviour:
    """No answer until ``seconds`` pass (then the connection closes) or the server stops."""
    return Hang(seconds)


def close_mid_body() -> Behaviour:
    """Half a body, then the connection closes."""
    return CloseMidBody()


def slow_drip(total_seconds: float) -> Behaviour:
    """A valid answer whose body trickles out over ``total_seconds``."""
    return SlowDrip(total_seconds)


def raw(body: bytes | str, code: int = 200) -> Behaviour:
    """Exactly ``body`` (JSON content type) with status ``code``."""
    return Raw(body.encode() if isinstance(body, str) else body, code)


def tool_call(name: str, input: dict[str, Any], text: str | None = None) -> Behaviour:
    """A call of the tool ``name`` with ``input``: ``tool_use`` / ``tool_calls`` /
    ``function_call`` in the request's wire format (streamed when the request streams)."""
    return ToolCall(name, input, text)


def answer(data: Any) -> Behaviour:
    """``data`` as the structured answer (a tool call's input, the JSON content), as given."""
    return Structured(data)


def verbatim(text: str) -> Behaviour:
    """Exactly ``text`` as the model's text, in a text block or the message content."""
    return Verbatim(text)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received: headers lower-cased, body parsed as JSON (None if not);
    ``raw`` is the body as its bytes arrived, ``target`` the path with its query string."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = b""
    target: str = ""
