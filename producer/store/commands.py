"""Redis commands as values: built where the logic is, sent by whoever holds the connection."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import redis

Command = tuple[str, tuple[Any, ...], dict[str, Any]]
"""A redis-py pipeline method's name, its positional and its keyword arguments."""


def command(name: str, *args: Any, **kwargs: Any) -> Command:
    """One command: ``command("hget", key, "field")``."""
    return (name, args, kwargs)


def load(pipe: Any, commands: Iterable[Command]) -> Any:
    """Queue ``commands`` on a redis-py pipeline (blocking or asyncio); returns the pipeline."""
    for name, args, kwargs in commands:
        getattr(pipe, name)(*args, **kwargs)
    return pipe


def execute(client: redis.Redis, *commands: Command) -> list[Any]:
    """Send ``commands`` in one round trip on a blocking client; their replies, in order."""
    with client.pipeline(transaction=False) as pipe:
        return load(pipe, commands).execute()  # type: ignore[no-any-return]
