"""The shared circuit breaker and rate limit, against a real Redis."""

from __future__ import annotations

import time

import pytest
import redis

from tersify.contract import FallbackReason
from tersify.errors import ProviderError
from tersify.store import keys
from tersify.worker.model.circuit import ALLOW_CACHE_SECONDS, Admission, CircuitBreaker
from tersify.worker.model.guard import CallGuard
from tersify.worker.model.providers.base import Completion, ModelRequest
from tersify.worker.model.ratelimit import RateLimiter
from tersify.worker.store.writebehind import WriteBehind

REQUEST = ModelRequest(system="s" * 400, user="u" * 3600, max_tokens=100)


@pytest.fixture
def bytes_client(redis_server, redis_client) -> redis.Redis:
    client = redis.Redis.from_url(redis_server.url)
    yield client
    client.close()


def breaker(client: redis.Redis, cooldown: float = 0.3) -> CircuitBreaker:
    return CircuitBreaker(client, "anthropic", threshold=3, cooldown=cooldown, probe=5.0)


def fail(b: CircuitBreaker, reason: FallbackReason = FallbackReason.SERVER_ERROR, probe=False):
    b.record(ok=False, probe=probe, reason=reason)


def test_the_circuit_opens_after_a_run_of_outage_failures(bytes_client) -> None:
    b = breaker(bytes_client)
    for _ in range(2):
        fail(b)
    assert b.admit() is Admission.ALLOW
    fail(b)
    assert b.admit() is Admission.REJECT


def test_a_success_resets_the_run(bytes_client) -> None:
    b = breaker(bytes_client)
    fail(b)
    fail(b)
    b.record(ok=True, probe=False)
    fail(b)
    fail(b)
    assert b.admit() is Admission.ALLOW


def test_client_errors_do_not_count_as_an_outage(bytes_client) -> None:
    b = breaker(bytes_client)
    for _ in range(5):
        fail(b, FallbackReason.CLIENT_ERROR)
    assert b.admit() is Admission.ALLOW


def test_after_the_cooldown_exactly_one_probe_goes_out_and_its_success_closes(bytes_client) -> None:
    b = breaker(bytes_client, cooldown=0.2)
    other_worker = breaker(bytes_client, cooldown=0.2)
    for _ in range(3):
        fail(b)
    time.sleep(0.3)
    assert b.admit() is Admission.PROBE
    assert other_worker.admit() is Admission.REJECT  # one probe for all workers
    b.record(ok=True, probe=True)
    assert other_worker.admit() is Admission.ALLOW


def test_a_failed_probe_opens_the_circuit_again(bytes_client) -> None:
    b = breaker(bytes_client, cooldown=0.2)
    for _ in range(3):
        fail(b)
    time.sleep(0.3)
    assert b.admit() is Admission.PROBE
    fail(b, FallbackReason.TIMEOUT, probe=True)
    assert b.admit() is Admission.REJECT


def test_the_guard_refuses_calls_while_the_circuit_is_open(bytes_client) -> None:
    b = breaker(bytes_client, cooldown=30)
    for _ in range(3):
        fail(b)
    sent: list[int] = []
    guard = CallGuard(breaker=b)
    with pytest.raises(ProviderError) as caught:
        guard.call(lambda: sent.append(1) or Completion("x", "m"), REQUEST, deadline=1e12)
    assert caught.value.reason is FallbackReason.CIRCUIT_OPEN
    assert sent == []


def test_the_guard_records_failures_of_the_calls_it_lets_through(bytes_client) -> None:
    b = breaker(bytes_client, cooldown=30)
    guard = CallGuard(breaker=b)

    def down() -> Completion:
        raise ProviderError(FallbackReason.CONNECTION_ERROR, "refused")

    for _ in range(3):
        with pytest.raises(ProviderError):
            guard.call(down, REQUEST, deadline=time.monotonic() + 10)
    assert b.admit() is Admission.REJECT


def test_the_rate_limit_is_shared_and_says_how_long_to_wait(bytes_client) -> None:
    first = RateLimiter(bytes_client, "openai", requests_per_minute=2, tokens_per_minute=0)
    second = RateLimiter(bytes_client, "openai", requests_per_minute=2, tokens_per_minute=0)
    assert first.try_take(10) == 0.0
    assert second.try_take(10) == 0.0
    wait = first.try_take(10)
    assert 0 < wait <= 30.0  # one request refills every 30 s at 2/min


def test_the_token_budget_limits_large_requests(bytes_client) -> None:
    limiter = RateLimiter(bytes_client, "openai", requests_per_minute=0, tokens_per_minute=6000)
    assert limiter.try_take(5000) == 0.0
    assert limiter.try_take(5000) > 0


def test_an_interactive_job_gives_up_when_the_budget_comes_after_its_deadline(bytes_client) -> None:
    limiter = RateLimiter(bytes_client, "openai", requests_per_minute=1, tokens_per_minute=0)
    limiter.acquire(1, deadline=time.monotonic() + 5)
    with pytest.raises(ProviderError) as caught:
        limiter.acquire(1, deadline=time.monotonic() + 5)
    assert caught.value.reason is FallbackReason.RATE_LIMITED


def test_a_patient_caller_waits_for_the_budget(bytes_client) -> None:
    limiter = RateLimiter(bytes_client, "openai", requests_per_minute=60, tokens_per_minute=0)
    refused = next((n for n in range(200) if limiter.try_take(1) > 0), None)
    assert refused is not None  # the bucket holds one minute's worth: 60 requests
    slept: list[float] = []
    limiter.acquire(
        1, deadline=time.monotonic() + 60, sleep=lambda s: (slept.append(s), time.sleep(s))
    )
    assert slept and sum(slept) <= 1.0  # one request a second refills


def test_an_allow_is_trusted_briefly_and_forgotten_after_a_local_failure(bytes_client) -> None:
    here, elsewhere = breaker(bytes_client), breaker(bytes_client)
    assert here.admit() is Admission.ALLOW
    for _ in range(3):
        fail(elsewhere)  # another worker opens the circuit
    assert here.admit() is Admission.ALLOW  # within ALLOW_CACHE_SECONDS: not asked again
    assert elsewhere.admit() is Admission.REJECT
    fail(here)
    assert here.admit() is Admission.REJECT  # a failure seen here asks Redis at once


def test_a_success_reset_can_be_written_behind_the_job(bytes_client) -> None:
    writes = WriteBehind(bytes_client, interval=60.0)
    b = CircuitBreaker(
        bytes_client, "anthropic", threshold=3, cooldown=0.3, probe=5.0, writes=writes
    )
    fail(b)
    fail(b)
    b.record(ok=True, probe=False)
    assert bytes_client.hget(keys.circuit("anthropic"), "failures") == b"2"  # not yet written
    assert writes.flush() == 1
    assert not bytes_client.exists(keys.circuit("anthropic"))
    writes.close()


def test_a_reset_written_late_never_closes_an_open_circuit(bytes_client) -> None:
    writes = WriteBehind(bytes_client, interval=60.0)
    b = CircuitBreaker(
        bytes_client, "anthropic", threshold=2, cooldown=30, probe=5.0, writes=writes
    )
    fail(b)
    b.record(ok=True, probe=False)  # a success, its reset still queued ...
    fail(b)  # ... when a later failure opens the circuit
    assert writes.flush() == 1
    assert b.admit() is Admission.REJECT
    writes.close()


def test_a_success_writes_no_reset_while_nothing_is_counted(bytes_client) -> None:
    writes = WriteBehind(bytes_client, interval=60.0)
    b = CircuitBreaker(
        bytes_client, "anthropic", threshold=3, cooldown=0.3, probe=5.0, writes=writes
    )
    assert b.admit() is Admission.ALLOW
    b.record(ok=True, probe=False)
    assert writes.flush() == 0  # a clean circuit: nothing to reset, nothing sent
    writes.close()


def test_a_failure_another_worker_counted_is_reset_once_a_look_finds_it(bytes_client) -> None:
    writes = WriteBehind(bytes_client, interval=60.0)
    b = CircuitBreaker(
        bytes_client, "anthropic", threshold=3, cooldown=0.3, probe=5.0, writes=writes
    )
    other_worker = breaker(bytes_client)
    fail(other_worker)
    fail(other_worker)
    assert b.admit() is Admission.ALLOW  # the look finds two failures counted
    b.record(ok=True, probe=False)
    assert writes.flush() == 1
    assert not bytes_client.exists(keys.circuit("anthropic"))
    fail(other_worker)
    fail(other_worker)
    assert bytes_client.hget(keys.circuit("anthropic"), "failures") == b"2"  # the run anew
    writes.close()


def test_while_one_thread_looks_the_others_trust_the_allow_that_just_ran_out(
    bytes_client, monkeypatch
) -> None:
    b = breaker(bytes_client)
    assert b.admit() is Admission.ALLOW  # a look: allowed for ALLOW_CACHE_SECONDS
    looks = []
    real = b._admit

    def counted(**kwargs):
        looks.append(1)
        return real(**kwargs)

    monkeypatch.setattr(b, "_admit", counted)
    time.sleep(ALLOW_CACHE_SECONDS * 1.2)
    with b._looking:  # another thread is asking Redis right now
        assert b.admit() is Admission.ALLOW
    assert looks == []
    assert b.admit() is Admission.ALLOW  # no look under way: this one asks
    assert looks == [1]
    fail(b)  # a failure here forgets the allow: the next call asks, whoever else looks
    with b._looking:
        assert b.admit() is Admission.ALLOW
    assert looks == [1, 1]
