"""Retrying model calls: exponential backoff with full jitter, never past the job's deadline.

Only failures that another attempt can fix are retried (timeouts, connection errors, 429, 5xx:
``ProviderError.retryable``); a 4xx other than 429, a malformed or empty answer is final. A
``Retry-After`` from the server is a floor under the backoff. An attempt is started only when
the wait before it still leaves ``min_attempt_seconds`` of the deadline to run it in.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import structlog

from tersify.errors import ProviderError

T = TypeVar("T")
log = structlog.get_logger("tersify.retry")
# One generator for the process: seeding a new one per call read os.urandom on every job.
_JITTER = random.Random()


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts, and how long to wait between them."""

    attempts: int = 3
    base_seconds: float = 0.5
    max_seconds: float = 8.0
    min_attempt_seconds: float = 1.0

    def backoff(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds before retry ``retry`` (1-based): full jitter, with Retry-After as a floor."""
        ceiling = min(self.max_seconds, self.base_seconds * 2 ** (retry - 1))
        wait = rng.uniform(0.0, ceiling)
        # A server's Retry-After is honoured up to the policy's cap, so no job outlives its
        # worker's shutdown grace waiting on one answer.
        return max(wait, min(retry_after, self.max_seconds)) if retry_after is not None else wait


def call_with_retries(
    attempt: Callable[[float], T],
    *,
    deadline: float,
    policy: RetryPolicy,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> T:
    """Call ``attempt(seconds_left)`` until it succeeds, fails for good, or time runs out.

    ``deadline`` is on ``clock``'s scale. Raises the last ``ProviderError``.
    """
    rng = rng or _JITTER
    retry = 0
    while True:
        try:
            return attempt(deadline - clock())
        except ProviderError as error:
            retry += 1
            if not error.retryable or retry >= policy.attempts:
                raise
            wait = policy.backoff(retry, error.retry_after, rng)
            if clock() + wait + policy.min_attempt_seconds > deadline:
                log.info("model_retry_abandoned", reason=error.reason.value, wait=round(wait, 3))
                raise
            log.info(
                "model_call_retried", reason=error.reason.value, retry=retry, wait=round(wait, 3)
            )
            sleep(wait)
