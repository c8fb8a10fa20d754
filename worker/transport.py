"""Kombu's Redis transport, hardened against poison messages written straight into a queue.

Kombu decodes each popped queue entry as JSON; an entry that is not JSON raises out of the
consumer loop and stops the worker ("Unrecoverable error"), and a restarted worker would meet
the next one the same way. Here such an entry, already popped, is recorded in the dead-letter
list with its reason and the consumer carries on. Everything else is kombu's own.
"""

from __future__ import annotations

import json
import time
from typing import Any

import redis
import structlog
from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import Empty

from producer import keys

log = structlog.get_logger("tersify.transport")

DEAD_LETTER_KEEP = 1000


# kombu's stubs do not describe the Redis channel's internals that are overridden here.
_RedisChannel: Any = kombu_redis.Channel
_RedisTransport: Any = kombu_redis.Transport


class Channel(_RedisChannel):  # type: ignore[misc]  # kombu ships no types for it
    """A Redis channel that dead-letters undecodable queue entries instead of dying on them."""

    def _brpop_read(self, **options: Any) -> bool:
        try:
            return bool(super()._brpop_read(**options))
        except (ValueError, TypeError) as exc:  # JSONDecodeError is a ValueError
            self._dead_letter(exc)
            return True  # the entry was consumed; poll again

    def _get(self, queue: str) -> Any:
        try:
            return super()._get(queue)
        except (ValueError, TypeError) as exc:
            self._dead_letter(exc)
            raise Empty() from None

    def _dead_letter(self, exc: Exception) -> None:
        reason = f"undecodable queue entry: {type(exc).__name__}: {str(exc)[:200]}"
        log.error("job_rejected", reason=reason)
        record = json.dumps({"reason": reason, "message": None, "at": time.time()})
        try:
            with self.conn_or_acquire() as client, client.pipeline() as pipe:
                pipe.lpush(keys.DEAD_LETTERS, record)
                pipe.ltrim(keys.DEAD_LETTERS, 0, DEAD_LETTER_KEEP - 1)
                pipe.execute()
        except (redis.RedisError, OSError):
            pass  # the reason is in the log; Redis is gone


class Transport(_RedisTransport):  # type: ignore[misc]  # kombu ships no types for it
    """Kombu's Redis transport with the hardened channel."""

    Channel = Channel
