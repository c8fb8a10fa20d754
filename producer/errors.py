"""Every exception tersify raises, in one tree.

::

    TersifyError
    ├── InvalidJobError            bad input, refused before anything is enqueued (also ValueError)
    │   ├── OutputTooLargeError    output over TERSIFY_MAX_OUTPUT_BYTES
    │   ├── UnsupportedSchemaError a schema_version this build does not speak
    │   └── RefusedEntryError      a queue entry a worker dead-letters (carries a reason)
    ├── HeldInputFullError         the session holds all the input it may; nothing was added
    ├── RedisUnavailableError      Redis could not be reached; nothing was enqueued
    ├── JobNotFoundError           no such job, or its result expired
    ├── ResultTimeoutError         the result did not arrive in time (also TimeoutError)
    └── ProviderError              a model call failed; the worker falls back (carries a reason)

``ProviderError.retryable`` tells whether another attempt can help (timeouts, 429, 5xx,
connection errors); the worker never retries past the job's deadline.
"""

from __future__ import annotations

from tersify.contract import DeadLetterReason, FallbackReason


class TersifyError(Exception):
    """Base class of every tersify error."""


class InvalidJobError(TersifyError, ValueError):
    """A job was refused before anything was enqueued."""


class OutputTooLargeError(InvalidJobError):
    """The output is larger than the configured hard cap."""


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


class ProviderError(TersifyError):
    """A model call failed; ``reason`` names why, ``detail`` is short and secret-free."""

    def __init__(
        self, reason: FallbackReason, detail: str = "", *, retry_after: float | None = None
    ) -> None:
        super().__init__(f"{reason.value}: {detail}" if detail else reason.value)
        self.reason = reason
        self.detail = detail
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """True when another attempt might succeed."""
        return self.reason in _RETRYABLE
