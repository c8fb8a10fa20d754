"""What ``TERSIFY_REDIS_URL`` names, and the one place Redis clients and broker URLs are made.

Either one Redis (``redis://``, ``rediss://``, ``unix://``: passed to redis-py and kombu as is)
or a primary watched by Redis Sentinel::

    sentinel://HOST:PORT[,HOST:PORT...]/PRIMARY_NAME[/DB]

With Sentinel every connection asks the sentinels for the current primary when it connects,
so after a fail-over each client, Lua script (reloaded on ``NOSCRIPT``), subscription and
blocking wait reconnects to the new primary. The passwords are settings
(``TERSIFY_REDIS_SENTINEL_PASSWORD`` for the sentinels, ``TERSIFY_REDIS_PASSWORD`` for the
primary), never part of the URL.

Every new connection to one Redis is greeted (its AUTH and SELECT, then a PING) within
``GREETING_SECONDS``: a port where something other than Redis listens — a web server, a
socket that never answers — fails in seconds as a ``NotRedisError``, which is not retried,
instead of timing out command after command. Under Sentinel the address comes from the
sentinels and a slow primary during a fail-over is retried, so there is no greeting.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import redis
import redis.asyncio
import redis.asyncio.retry
import redis.asyncio.sentinel
import redis.retry
import redis.sentinel
from redis.backoff import ExponentialBackoff

from tersify.errors import ConfigurationError, os_reason
from tersify.settings import Settings

# One blocking call never outlives the socket timeout; longer waits loop in slices this long.
WAIT_SLICE_SECONDS = 5.0
# How long a new connection may take to answer its greeting (AUTH, SELECT, PING).
GREETING_SECONDS = 5.0
# How long a command of an asyncio client waits for a free pooled connection.
_POOL_WAIT_SECONDS = 5.0

SENTINEL_SCHEME = "sentinel://"
SENTINEL_DEFAULT_PORT = 26379
# Retries under Sentinel back off up to this long each, for TERSIFY_REDIS_FAILOVER_SECONDS.
_FAILOVER_STEP_SECONDS = 0.5


class NotRedisError(redis.RedisError):
    """The server at the URL took the connection but did not answer as Redis does.

    A redis-py error that its retries do not catch: the first command fails at once.
    """


_GREETING_FAILURES = (redis.TimeoutError, redis.exceptions.InvalidResponse, socket.timeout)


def _not_redis(conn: Any, exc: BaseException) -> NotRedisError:
    where = f"{conn.host}:{conn.port}" if hasattr(conn, "host") else "the server"
    if isinstance(exc, redis.TimeoutError | socket.timeout):
        return NotRedisError(f"{where} gave no Redis answer within {GREETING_SECONDS:g} s")
    return NotRedisError(f"{where} answered, but not as Redis does")


def _greet(conn: redis.connection.AbstractConnection) -> None:
    """A new blocking connection's handshake and a PING, within ``GREETING_SECONDS``."""
    sock = conn._sock  # redis-py hands the connected socket over this way
    assert sock is not None
    waited = sock.gettimeout()
    sock.settimeout(GREETING_SECONDS)
    try:
        conn.on_connect_check_health(check_health=False)  # no health PING, no retry inside
        conn.send_command("PING", check_health=False)
        reply = conn.read_response()
    except _GREETING_FAILURES as exc:  # redis-py closes the connection on the way out
        raise _not_redis(conn, exc) from exc
    finally:
        if conn._sock is not None:
            conn._sock.settimeout(waited)
    if reply not in (b"PONG", "PONG", True):
        raise _not_redis(conn, redis.exceptions.InvalidResponse(f"PING answered {reply!r}"))


async def _agreet(conn: redis.asyncio.connection.AbstractConnection) -> None:
    """``_greet`` for a new asyncio connection."""
    waited = conn.socket_timeout
    conn.socket_timeout = GREETING_SECONDS
    try:
        await conn.on_connect_check_health(check_health=False)
        await conn.send_command("PING", check_health=False)
        reply = await conn.read_response()
    except _GREETING_FAILURES as exc:
        raise _not_redis(conn, exc) from exc
    finally:
        conn.socket_timeout = waited
    if reply not in (b"PONG", "PONG", True):
        raise _not_redis(conn, redis.exceptions.InvalidResponse(f"PING answered {reply!r}"))


@dataclass(frozen=True)
class SentinelTarget:
    """A Sentinel-watched primary: the sentinels' addresses, the primary's name, its database."""

    sentinels: tuple[tuple[str, int], ...]
    primary: str
    db: int = 0


def sentinel_target(url: str) -> SentinelTarget | None:
    """The Sentinel target of a ``sentinel://`` URL, None for any other URL."""
    if not url.startswith(SENTINEL_SCHEME):
        return None
    rest = url[len(SENTINEL_SCHEME) :]
    hosts, _, path = rest.partition("/")
    if "@" in hosts:
        raise ConfigurationError(
            "TERSIFY_REDIS_URL: put Sentinel passwords in TERSIFY_REDIS_PASSWORD and "
            "TERSIFY_REDIS_SENTINEL_PASSWORD, not in the URL"
        )
    parts = [p for p in path.split("/") if p]
    if not hosts or not 1 <= len(parts) <= 2:
        raise ConfigurationError(
            "TERSIFY_REDIS_URL: expected sentinel://HOST:PORT[,HOST:PORT...]/PRIMARY_NAME[/DB]"
        )
    try:
        sentinels = tuple(_address(h) for h in hosts.split(","))
        db = int(parts[1]) if len(parts) == 2 else 0
    except ValueError:
        raise ConfigurationError(
            "TERSIFY_REDIS_URL: a Sentinel port or the database is not a number"
        ) from None
    return SentinelTarget(sentinels, parts[0], db)


def _address(host: str) -> tuple[str, int]:
    name, sep, port = host.rpartition(":")
    if not sep or "]" in port:  # no port, or a bare [IPv6] address
        return host.strip("[]"), SENTINEL_DEFAULT_PORT
    return name.strip("[]"), int(port)


class PrimaryConnection(redis.sentinel.SentinelManagedConnection):
    """A connection to the Sentinel primary that asks the sentinels again on every reconnect.

    redis-py reconnects a dropped connection inside a command's retry with the address it
    had (the dead primary) for the whole retry budget; here that reconnect goes through the
    sentinels, as a new connection's does, and so reaches the new primary.
    """

    def connect_check_health(
        self, check_health: bool = True, retry_socket_connect: bool = True
    ) -> None:
        """Connect through the sentinels, unless the sentinels' answer is being connected to."""
        if self._sock is None and retry_socket_connect:
            self.connect()  # type: ignore[no-untyped-call]  # asks the sentinels, retrying
            return
        super().connect_check_health(check_health, retry_socket_connect)


class AsyncPrimaryConnection(redis.asyncio.sentinel.SentinelManagedConnection):
    """``PrimaryConnection`` for asyncio clients."""

    async def connect_check_health(
        self, check_health: bool = True, retry_socket_connect: bool = True
    ) -> None:
        """Connect through the sentinels, unless the sentinels' answer is being connected to."""
        if self._reader is None and retry_socket_connect:
            await self.connect()  # type: ignore[no-untyped-call]
            return
        await super().connect_check_health(check_health, retry_socket_connect)


class PrimaryPool(redis.sentinel.SentinelConnectionPool):
    """The primary's pool; closing it also closes the connections to the sentinels."""

    def disconnect(self, inuse_connections: bool = True) -> None:
        """Close every connection (``inuse_connections``: the client is closing)."""
        super().disconnect(inuse_connections)
        if inuse_connections:
            for sentinel in self.sentinel_manager.sentinels:
                sentinel.close()


class AsyncPrimaryPool(redis.asyncio.sentinel.SentinelConnectionPool):
    """``PrimaryPool`` for asyncio clients."""

    async def disconnect(self, inuse_connections: bool = True) -> None:
        """Close every connection (``inuse_connections``: the client is closing)."""
        await super().disconnect(inuse_connections)
        if inuse_connections:
            for sentinel in self.sentinel_manager.sentinels:
                await sentinel.aclose()


def _secret(settings: Settings, name: str) -> str | None:
    value = getattr(settings, name)
    return value.get_secret_value() if value is not None else None


def _primary_options(
    settings: Settings, target: SentinelTarget, options: dict[str, Any]
) -> dict[str, Any]:
    """``master_for``'s keywords for the Sentinel ``target`` (the faces add their classes)."""
    return {"db": target.db, "password": _secret(settings, "redis_password"), **options}


def sync_client(settings: Settings, **options: Any) -> redis.Redis:
    """A redis-py client for ``settings.redis_url``; ``options`` as for ``Redis.from_url``."""
    target = sentinel_target(settings.redis_url)
    if target is None:
        options.setdefault("redis_connect_func", _greet)
        return redis.Redis.from_url(settings.redis_url, **options)
    options["retry"] = redis.retry.Retry(_failover_backoff(), failover_retries(settings))
    sentinel = redis.sentinel.Sentinel(  # type: ignore[no-untyped-call]  # redis-py: untyped
        list(target.sentinels), sentinel_kwargs=_sentinel_kwargs(settings, options)
    )
    client: redis.Redis = sentinel.master_for(  # type: ignore[no-untyped-call]
        target.primary,
        connection_class=PrimaryConnection,
        connection_pool_class=PrimaryPool,
        **_primary_options(settings, target, options),
    )
    return client


def async_client(settings: Settings, **options: Any) -> redis.asyncio.Redis:
    """An asyncio client for ``settings.redis_url``; ``options`` as for ``from_url``."""
    target = sentinel_target(settings.redis_url)
    if target is None:
        options.setdefault("redis_connect_func", _agreet)
        pool = redis.asyncio.BlockingConnectionPool.from_url(settings.redis_url, **options)
        return redis.asyncio.Redis.from_pool(pool)
    options.pop("timeout", None)  # the Sentinel pool does not wait for a free connection
    options["retry"] = redis.asyncio.retry.Retry(_failover_backoff(), failover_retries(settings))
    sentinel = redis.asyncio.sentinel.Sentinel(  # type: ignore[no-untyped-call]  # untyped
        list(target.sentinels), sentinel_kwargs=_sentinel_kwargs(settings, options)
    )
    client: redis.asyncio.Redis = sentinel.master_for(
        target.primary,
        connection_class=AsyncPrimaryConnection,
        connection_pool_class=AsyncPrimaryPool,
        **_primary_options(settings, target, options),
    )
    return client


def _tersify_options(settings: Settings, decode: bool) -> dict[str, Any]:
    return {
        "max_connections": settings.redis_pool_size,
        "socket_timeout": WAIT_SLICE_SECONDS + 5.0,
        "socket_connect_timeout": 5.0,
        "decode_responses": decode,
    }


def redis_client(settings: Settings, *, decode: bool = False) -> redis.Redis:
    """A blocking Redis client sized and timed for tersify's calls.

    It fails fast (well under a second) when Redis is down, instead of redis-py's ~4 s default.
    """
    return sync_client(
        settings,
        health_check_interval=30,
        retry=redis.retry.Retry(ExponentialBackoff(cap=0.2, base=0.02), 3),
        **_tersify_options(settings, decode),
    )


def async_redis_client(settings: Settings, *, decode: bool = False) -> redis.asyncio.Redis:
    """An asyncio Redis client sized and timed for tersify's calls.

    When all ``redis_pool_size`` connections are busy a command waits (up to 5 s) for one to
    come free, instead of failing at once as "Redis unavailable".
    """
    return async_client(
        settings,
        timeout=_POOL_WAIT_SECONDS,
        retry=redis.asyncio.retry.Retry(ExponentialBackoff(cap=0.2, base=0.02), 3),
        **_tersify_options(settings, decode),
    )


async def aclose(client: redis.asyncio.Redis) -> None:
    """Close ``client`` and, under Sentinel, the clients it keeps to ask the sentinels."""
    manager = getattr(client.connection_pool, "sentinel_manager", None)
    await client.aclose()
    for sentinel in getattr(manager, "sentinels", ()):
        await sentinel.aclose()


def close(client: redis.Redis) -> None:
    """Close ``client`` and, under Sentinel, the clients it keeps to ask the sentinels."""
    manager = getattr(client.connection_pool, "sentinel_manager", None)
    client.close()
    for sentinel in getattr(manager, "sentinels", ()):
        sentinel.close()


def _failover_backoff() -> ExponentialBackoff:
    return ExponentialBackoff(cap=_FAILOVER_STEP_SECONDS, base=0.02)


def failover_retries(settings: Settings) -> int:
    """Retries (each backing off at most 0.5 s) that outlast a fail-over of that many seconds."""
    return int(settings.redis_failover_seconds / _FAILOVER_STEP_SECONDS) + 3


def _sentinel_kwargs(settings: Settings, options: dict[str, Any]) -> dict[str, Any]:
    names = ("socket_timeout", "socket_connect_timeout")
    kwargs: dict[str, Any] = {k: options[k] for k in names if k in options}
    kwargs["password"] = _secret(settings, "redis_sentinel_password")
    return kwargs


def broker_url(settings: Settings) -> str:
    """The URL kombu connects with: ``redis_url``, or one ``sentinel://`` per sentinel.

    kombu reads the primary's password from the URL (it hides it when it prints one) and
    tries the listed sentinels in turn.
    """
    target = sentinel_target(settings.redis_url)
    if target is None:
        return settings.redis_url
    password = _secret(settings, "redis_password")
    auth = f":{quote(password, safe='')}@" if password else ""
    return ";".join(f"sentinel://{auth}{h}:{p}/{target.db}" for h, p in target.sentinels)


def broker_sentinel_options(settings: Settings) -> dict[str, Any]:
    """kombu transport options naming the Sentinel primary (empty for a plain Redis URL)."""
    target = sentinel_target(settings.redis_url)
    if target is None:
        return {}
    sentinel_kwargs: dict[str, Any] = {"socket_timeout": 5.0, "socket_connect_timeout": 5.0}
    password = _secret(settings, "redis_sentinel_password")
    if password:
        sentinel_kwargs["password"] = password
    return {"master_name": target.primary, "sentinel_kwargs": sentinel_kwargs}


_PASSWORD = re.compile(r"://[^@/\s]*@")


def shown_url(url: str) -> str:
    """``url`` as messages and logs show it: any user and password in it replaced by ``***``."""
    return _PASSWORD.sub("://***@", url)


def configuration_mistake(url: str, exc: BaseException) -> str | None:
    """The one line for a Redis that answered but refused how it was asked (a password, a
    database number): a mistake in ``TERSIFY_REDIS_URL``, not an outage. None otherwise."""
    where = shown_url(url)
    said = str(exc).rstrip(".")
    if isinstance(exc, NotRedisError):
        return (
            f"the server at {where} is not Redis ({said}): TERSIFY_REDIS_URL names the wrong "
            "port or host"
        )
    if isinstance(exc, redis.AuthenticationError) or said.startswith(("NOAUTH", "WRONGPASS")):
        return (
            f"Redis at {where} refused the password ({said}): put the right one in "
            "TERSIFY_REDIS_URL (redis://:PASSWORD@HOST:PORT/DB; TERSIFY_REDIS_PASSWORD with "
            "sentinel://)"
        )
    if isinstance(exc, redis.ResponseError) and "DB index" in said:
        return (
            f"Redis at {where} has no such database ({said}): end TERSIFY_REDIS_URL with a "
            "number below the server's `databases` (16 unless configured)"
        )
    return None


def failure_reason(exc: BaseException) -> str:
    """Why a Redis call failed, in a few words: "connection refused", "timed out", …

    redis-py's own message names the address; the operating system's reason is in the error it
    replaced (``__context__``), which is read first.
    """
    if isinstance(exc, redis.AuthenticationError):
        return "the password was refused (TERSIFY_REDIS_PASSWORD, or the URL's)"
    if isinstance(exc, redis.TimeoutError):
        return "timed out"
    if (reason := os_reason(exc)) is not None:
        return reason
    if isinstance(exc, redis.ConnectionError):
        return "the connection failed"
    return shown_url(f"{type(exc).__name__}: {exc}")
