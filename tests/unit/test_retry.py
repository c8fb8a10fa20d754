"""Retry policy: backoff with full jitter, Retry-After honoured, never past the deadline."""

from __future__ import annotations

import random

import pytest

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.worker.model.retry import RetryPolicy, call_with_retries


class Clock:
    """A fake clock the test advances by sleeping on it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def failing(*errors: ProviderError, answer: str = "ok"):
    """An attempt function that raises ``errors`` in turn, then answers."""
    remaining = list(errors)
    calls: list[float] = []

    def attempt(seconds_left: float) -> str:
        calls.append(seconds_left)
        if remaining:
            raise remaining.pop(0)
        return answer

    return attempt, calls


def test_a_retryable_failure_is_retried_until_it_succeeds() -> None:
    clock = Clock()
    attempt, calls = failing(
        ProviderError(FallbackReason.SERVER_ERROR), ProviderError(FallbackReason.TIMEOUT)
    )
    result = call_with_retries(
        attempt, deadline=30, policy=RetryPolicy(), clock=clock, sleep=clock.sleep
    )
    assert result == "ok"
    assert len(calls) == 3
    assert len(clock.sleeps) == 2


@pytest.mark.parametrize("reason", [FallbackReason.CLIENT_ERROR, FallbackReason.MALFORMED])
def test_a_final_failure_is_not_retried(reason: FallbackReason) -> None:
    clock = Clock()
    attempt, calls = failing(ProviderError(reason))
    with pytest.raises(ProviderError) as caught:
        call_with_retries(
            attempt, deadline=30, policy=RetryPolicy(), clock=clock, sleep=clock.sleep
        )
    assert caught.value.reason is reason
    assert len(calls) == 1
    assert clock.sleeps == []


def test_retry_after_is_a_floor_under_the_backoff() -> None:
    clock = Clock()
    attempt, _ = failing(ProviderError(FallbackReason.RATE_LIMITED, retry_after=4.0))
    call_with_retries(attempt, deadline=30, policy=RetryPolicy(), clock=clock, sleep=clock.sleep)
    assert clock.sleeps == [pytest.approx(4.0, abs=0.5)] and clock.sleeps[0] >= 4.0


def test_no_retry_starts_when_the_wait_would_eat_the_deadline() -> None:
    clock = Clock()
    attempt, calls = failing(ProviderError(FallbackReason.RATE_LIMITED, retry_after=10.0))
    with pytest.raises(ProviderError):
        call_with_retries(attempt, deadline=5, policy=RetryPolicy(), clock=clock, sleep=clock.sleep)
    assert len(calls) == 1
    assert clock.now == 0.0


def test_attempts_are_capped() -> None:
    clock = Clock()
    errors = [ProviderError(FallbackReason.SERVER_ERROR) for _ in range(10)]
    attempt, calls = failing(*errors)
    with pytest.raises(ProviderError):
        call_with_retries(
            attempt, deadline=1000, policy=RetryPolicy(attempts=4), clock=clock, sleep=clock.sleep
        )
    assert len(calls) == 4


def test_backoff_has_full_jitter_under_an_exponential_ceiling() -> None:
    policy = RetryPolicy(base_seconds=0.5, max_seconds=3.0)
    rng = random.Random(7)
    waits = {
        retry: [policy.backoff(retry, None, rng) for _ in range(200)] for retry in (1, 2, 3, 5)
    }
    assert max(waits[1]) <= 0.5 and max(waits[2]) <= 1.0 and max(waits[5]) <= 3.0
    assert min(waits[3]) < 0.5 < max(waits[3])  # spread over the whole range, not a fixed step


def test_each_attempt_is_told_how_much_time_is_left() -> None:
    clock = Clock()
    attempt, calls = failing(ProviderError(FallbackReason.SERVER_ERROR, retry_after=2.0))
    call_with_retries(attempt, deadline=10, policy=RetryPolicy(), clock=clock, sleep=clock.sleep)
    assert calls[0] == 10 and calls[1] == pytest.approx(10 - clock.sleeps[0])
