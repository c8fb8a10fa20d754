"""Spill store: full texts that ``truncate`` cut, kept in Redis so a model can read any range back.

A spill is one hash under ``keys.spill(ref)`` holding the text and the session it belongs to,
with a TTL. The ref is 128 random bits: knowing it is what grants access, so it must never be
derived from the content or the session.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import cast

import redis
import structlog
from pydantic import BaseModel, ConfigDict, Field

from tersify.errors import InvalidJobError, JobNotFoundError, RedisUnavailableError
from tersify.store import keys, sessions
from tersify.store.commands import load
from tersify.text.cut import split_lines

DEFAULT_READ_LIMIT = 2000

_log = structlog.get_logger(__name__)


class SpillRange(BaseModel):
    """A range of lines read back from a spill: ``lines[0]`` is line ``offset`` (0-based)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ref: str
    offset: int = Field(ge=0)
    lines: tuple[str, ...]
    total_lines: int = Field(ge=0)
    has_more: bool

    @property
    def next_offset(self) -> int | None:
        """The offset to pass for the following range, or None at the end."""
        return self.offset + len(self.lines) if self.has_more else None

    @property
    def text(self) -> str:
        """The lines joined with newlines."""
        return "\n".join(self.lines)


def _as_str(value: object) -> str:
    # The store works with clients made with and without decode_responses.
    return value.decode() if isinstance(value, bytes) else str(value)


class SpillStore:
    """Saves full texts for a while and serves them back by line range."""

    def __init__(self, client: redis.Redis, *, ttl_seconds: int) -> None:
        if ttl_seconds < 1:
            raise ValueError("ttl_seconds must be at least 1")
        self._client = client
        self._ttl = ttl_seconds

    def save(self, session_id: str, text: str) -> str:
        """Store ``text`` for ``session_id`` and return the unguessable ref that reads it back."""
        ref = secrets.token_hex(16)
        key = keys.spill(ref)
        try:
            with self._client.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping={"session_id": session_id, "text": text})
                pipe.expire(key, self._ttl)
                load(pipe, sessions.index_keys(session_id, (key,), self._ttl))
                pipe.execute()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise RedisUnavailableError(f"could not save spilled output: {exc}") from exc
        return ref

    def read_spill(
        self,
        ref: str,
        offset: int = 0,
        limit: int = DEFAULT_READ_LIMIT,
        *,
        session_id: str | None = None,
    ) -> SpillRange:
        """Lines ``offset`` .. ``offset + limit - 1`` (0-based) of a spilled text.

        Raises ``JobNotFoundError`` for an unknown or expired ref (or one that belongs to another
        session, when ``session_id`` is given) and ``InvalidJobError`` for a negative range.
        """
        if offset < 0 or limit < 0:
            raise InvalidJobError("offset and limit must not be negative")
        try:
            stored = cast(
                "list[object | None]",
                self._client.hmget(keys.spill(ref), ["session_id", "text"]),
            )
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise RedisUnavailableError(f"could not read spilled output: {exc}") from exc
        owner, text = stored
        if text is None or (session_id is not None and _as_str(owner) != session_id):
            raise JobNotFoundError(f"no spilled output {ref!r} (unknown or expired)")
        lines = split_lines(_as_str(text))
        window = lines[offset : offset + limit]
        return SpillRange(
            ref=ref,
            offset=offset,
            lines=tuple(window),
            total_lines=len(lines),
            has_more=offset + len(window) < len(lines),
        )

    def spill_callback(self, session_id: str) -> Callable[[str], str | None]:
        """A ``spill`` for ``producer.text.truncate``: saves the full text, returns its ref.

        When Redis is unreachable it returns None, so the truncation still succeeds, only
        without a pointer to the full text.
        """

        def spill(text: str) -> str | None:
            try:
                return self.save(session_id, text)
            except RedisUnavailableError as exc:
                _log.warning("spill_failed", session_id=session_id, error=str(exc))
                return None

        return spill
