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


_FLAGS = frozenset({"nx", "xx", "gt", "lt"})
_VALUED = frozenset({"ex", "px"})


def script_args(commands: Iterable[Command]) -> list[Any]:
    """``commands`` as a script's ARGV: each one's argument count, then its arguments as Redis
    spells them (``("set", (k, v), {"ex": 60})`` → ``3+2, "SET", k, v, "EX", 60``).

    Only the options the scripted writes use are known; any other raises ``ValueError``.
    """
    flat: list[Any] = []
    for name, args, kwargs in commands:
        words: list[Any] = [name.upper(), *args]
        for option, value in kwargs.items():
            if option == "mapping":
                words += [part for pair in value.items() for part in pair]
            elif option in _VALUED:
                words += [option.upper(), value]
            elif option in _FLAGS:
                words += [option.upper()] if value else []
            else:
                raise ValueError(f"{name}: option {option!r} cannot be sent in a script")
        flat += [len(words), *words]
    return flat


def execute(client: redis.Redis, *commands: Command) -> list[Any]:
    """Send ``commands`` in one round trip on a blocking client; their replies, in order."""
    with client.pipeline(transaction=False) as pipe:
        return load(pipe, commands).execute()  # type: ignore[no-any-return]
