"""Every exception tersify raises, in one tree.

::

    TersifyError
    ├── ConfigurationError         a setting that cannot work; names its TERSIFY_* variable
    │   │                          (also ValueError)
    │   ├── AuthNotConfiguredError         the API without tokens nor no-auth mode (worker.api)
    │   └── Redis{Server,Sentinel}MissingError  no binary to start (worker.processes)
    ├── RegistryError              a registry (the tool kinds) lacks a part: raised at import
    ├── InvalidJobError            bad input, refused before anything is enqueued (also ValueError)
    │   ├── OutputTooLargeError    a conversation or request body over its cap (names the setting)
    │   │   └── BodyTooLargeError  a gateway request over its cap (worker.gateway.app)
    │   ├── CallbackURLError       a callback URL the allow-list refuses (store.callbacks)
    │   ├── UnsupportedSchemaError a schema_version this build does not speak
    │   └── RefusedEntryError      a queue entry a worker dead-letters (carries a reason)
    ├── HeldInputFullError         the session holds all the input it may; nothing was added
    ├── RedisUnavailableError      Redis could not be reached; nothing was enqueued
    ├── JobNotFoundError           no such job, or its result expired
    ├── ResultTimeoutError         the result did not arrive in time (also TimeoutError)
    ├── DownstreamError            the MCP server the proxy runs ended before it answered
    ├── ProviderError              a model call failed; the worker falls back (carries a reason)
    ├── UnusualJSONError           a body the gateway forwards untouched (worker.gateway.spans)
    └── Failure                    a command ends with one line and an exit code (worker.cli)

The leaves named with a module live there, beside the one code that raises and catches them.

``ProviderError.retryable`` tells whether another attempt can help (timeouts, 429, 5xx,
connection errors); the worker never retries past the job's deadline.
"""

from __future__ import annotations

from pydantic import ValidationError

from tersify.contract import DeadLetterReason, FallbackReason


class TersifyError(Exception):
    """Base class of every tersify error."""


class ConfigurationError(TersifyError, ValueError):
    """A setting's value cannot work; the message names the ``TERSIFY_*`` variable and a fix."""


class RegistryError(TersifyError, TypeError):
    """A registry of kinds lacks a part or holds one twice: a bug, raised when it is imported."""


class InvalidJobError(TersifyError, ValueError):
    """A job was refused before anything was enqueued."""


class OutputTooLargeError(InvalidJobError):
    """Input larger than its cap; the message gives the size, the cap and the setting."""


class UnsupportedSchemaError(InvalidJobError):
    """The message speaks a schema version this build does not know."""


class RefusedEntryError(InvalidJobError):
    """A queue entry that is not a complete job message; ``reason`` is its dead-letter reason."""

    def __init__(self, reason: DeadLetterReason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


class HeldInputFullError(TersifyError):
    """Held input past the session's caps; ``status`` is 413 for one message over the byte cap
    on its own, 429 when the session is full (take its input first)."""

    def __init__(self, detail: str, status: int) -> None:
        super().__init__(detail)
        self.status = status


class RedisUnavailableError(TersifyError):
    """Redis could not be reached; the operation had no effect."""


class JobNotFoundError(TersifyError, KeyError):
    """No job with this id is known (never submitted, or its result expired)."""

    def __str__(self) -> str:
        return Exception.__str__(self)


class ResultTimeoutError(TersifyError, TimeoutError):
    """The result did not arrive within the wait's timeout."""


_RETRYABLE = frozenset(
    {
        FallbackReason.TIMEOUT,
        FallbackReason.RATE_LIMITED,
        FallbackReason.SERVER_ERROR,
        FallbackReason.CONNECTION_ERROR,
    }
)


class DownstreamError(TersifyError):
    """The MCP server the proxy started ended, or broke the protocol, before it answered;
    ``status`` is its exit status when it exited."""

    def __init__(self, message: str, status: int | None) -> None:
        super().__init__(message)
        self.status = status


class ProviderError(TersifyError):
    """A model call failed; ``reason`` names why, ``detail`` is short and secret-free."""

    def __init__(
        self,
        reason: FallbackReason,
        detail: str = "",
        *,
        retry_after: float | None = None,
        provider: str | None = None,
    ) -> None:
        super().__init__(f"{reason.value}: {detail}" if detail else reason.value)
        self.reason = reason
        self.detail = detail
        self.retry_after = retry_after
        self.provider = provider  # the provider that failed, once a route is known

    @property
    def retryable(self) -> bool:
        """True when another attempt might succeed."""
        return self.reason in _RETRYABLE


def invalid_fields(error: ValidationError | ValueError | TypeError) -> str:
    """A validation error as one line: ``field: what is wrong (got VALUE)`` for each field."""
    if not isinstance(error, ValidationError):
        return str(error)
    parts = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        if message[1:2].islower():
            message = message[:1].lower() + message[1:]
        got = item.get("input")
        plain = isinstance(got, int | float | str) and len(str(got)) < 60
        shown = f" (got {got!r})" if plain else ""
        parts.append(f"{where}: {message}{shown}" if where else message)
    return "; ".join(parts)


def os_reason(exc: BaseException) -> str | None:
    """The operating system's reason under ``exc`` ("connection refused", "no such file or
    directory"), read down its chain of causes; None when there is none."""
    seen: BaseException | None = exc
    for _ in range(5):  # a short chain: a library's error wraps the OS error once or twice
        if seen is None:
            break
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror.lower()
        seen = seen.__cause__ or seen.__context__
    return None
