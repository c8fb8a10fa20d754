"""The session gate against a real redis-server."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import redis
import redis.asyncio
from redis.backoff import NoBackoff
from redis.retry import Retry
from structlog.testing import capture_logs

from tersify.errors import HeldInputFullError, InvalidJobError, RedisUnavailableError
from tersify.gate import AsyncSessionGate, CompletionOutcome, SessionGate
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.redis_server import LocalRedis, free_port

TINY = Settings(gate_lease_seconds=0.3, gate_max_seconds=1.0)
RESULT = '{"text": "short"}'

MakeGate = Callable[..., SessionGate]


@pytest.fixture
def make_gate(redis_client: redis.Redis) -> MakeGate:
    """A factory of gates on the test's Redis, with default or tiny settings."""

    def make(settings: Settings | None = None) -> SessionGate:
        return SessionGate(redis_client, settings or Settings())

    return make


@pytest.fixture
def gate(make_gate: MakeGate) -> SessionGate:
    """A gate with the default settings (15 s lease, 60 s cap)."""
    return make_gate()


@pytest.fixture
def dead_url() -> str:
    """A redis URL (with a password) where nothing listens."""
    return f"redis://:hunter2@127.0.0.1:{free_port()}/0"


@pytest.fixture
def dead_client(dead_url: str) -> Iterator[redis.Redis]:
    """A client that fails at once instead of retrying with backoff."""
    client = redis.Redis.from_url(dead_url, retry=Retry(NoBackoff(), 0), socket_connect_timeout=1)
    yield client
    client.close()


def run_in_threads(*targets: Callable[[], object]) -> list[object]:
    """Run each target in its own thread at once; return their results, re-raising failures."""
    results: list[object] = [None] * len(targets)
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(targets))

    def runner(i: int, target: Callable[[], object]) -> None:
        try:
            barrier.wait()
            results[i] = target()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=runner, args=(i, t)) for i, t in enumerate(targets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    if errors:
        raise errors[0]
    return results


def test_an_unknown_session_reads_open(gate: SessionGate) -> None:
    assert gate.is_open("nobody")
    assert gate.status("nobody").open


def test_the_gate_closes_when_a_job_takes_a_hold(gate: SessionGate) -> None:
    token = gate.close_for("s1", "job-1", tool_type="CommandOutput")
    assert token > 0
    assert not gate.is_open("s1")
    assert gate.is_open("s2")


def test_close_for_is_idempotent_for_the_same_job(gate: SessionGate) -> None:
    first = gate.close_for("s1", "job-1")
    assert gate.close_for("s1", "job-1") == first
    assert gate.close_for("s1", "job-2") > first
    assert len(gate.status("s1").jobs) == 2


def test_the_gate_opens_when_the_job_releases(gate: SessionGate) -> None:
    token = gate.close_for("s1", "job-1")
    assert gate.release("s1", "job-1", token)
    assert gate.is_open("s1")


def test_two_jobs_keep_the_gate_closed_until_both_release(gate: SessionGate) -> None:
    first = gate.close_for("s1", "job-1")
    second = gate.close_for("s1", "job-2")
    assert gate.release("s1", "job-1", first)
    assert not gate.is_open("s1")
    assert gate.release("s1", "job-2", second)
    assert gate.is_open("s1")


def test_reopen_for_drops_the_hold_of_a_job_that_was_never_published(gate: SessionGate) -> None:
    token = gate.close_for("s1", "job-1")
    assert gate.reopen_for("s1", "job-1", token)
    assert gate.is_open("s1")


def test_renew_extends_the_lease_but_never_past_the_cap(make_gate: MakeGate) -> None:
    gate = make_gate(TINY)
    started = time.monotonic()
    token = gate.close_for("s1", "job-1")
    renewed_past_the_first_lease = False
    while gate.renew("s1", "job-1", token):
        renewed_past_the_first_lease |= time.monotonic() - started > 0.4
        assert gate.status("s1").jobs[0].expires_in_seconds <= 0.3
        time.sleep(0.1)
    assert renewed_past_the_first_lease
    assert time.monotonic() - started < 1.0 + 0.15
    assert gate.is_open("s1")


def test_a_cap_shorter_than_the_lease_bounds_the_hold(gate: SessionGate) -> None:
    gate.close_for("s1", "job-1", cap_seconds=0.2)
    assert gate.status("s1").jobs[0].expires_in_seconds <= 0.2
    assert gate.wait_open("s1", timeout=2.0)


def test_a_lease_not_renewed_expires_and_opens_the_gate_by_itself(make_gate: MakeGate) -> None:
    gate = make_gate(TINY)
    token = gate.close_for("s1", "job-1")
    time.sleep(0.35)
    assert gate.is_open("s1")
    assert not gate.renew("s1", "job-1", token)
    assert gate.is_open("s1")


def test_a_release_by_a_non_holder_is_ignored_and_logged(gate: SessionGate) -> None:
    token = gate.close_for("s1", "job-1")
    with capture_logs() as logs:
        assert not gate.release("s1", "job-1", token + 1)
        assert not gate.release("s1", "no-such-job", token)
    assert not gate.is_open("s1")
    assert [(e["event"], e["reason"]) for e in logs] == [
        ("gate_release_ignored", "stale_token"),
        ("gate_release_ignored", "unknown_job"),
    ]


def test_complete_applies_once_and_keeps_a_second_result_as_late(
    gate: SessionGate, redis_client: redis.Redis
) -> None:
    token = gate.close_for("s1", "job-1")
    other = gate.close_for("s1", "job-2")
    outcome = gate.complete("job-1", RESULT, ttl=60, session_id="s1", token=token)
    assert outcome is CompletionOutcome.APPLIED
    again = gate.complete("job-1", '{"text": "again"}', ttl=60, session_id="s1", token=token)
    assert again is CompletionOutcome.LATE
    assert redis_client.lrange(keys.result("job-1"), 0, -1) == [RESULT]
    assert redis_client.lrange(keys.late_result("job-1"), 0, -1) == ['{"text": "again"}']
    assert 0 < redis_client.ttl(keys.late_result("job-1")) <= 60
    assert [job.job_id for job in gate.status("s1").jobs] == ["job-2"]
    assert gate.release("s1", "job-2", other)


def test_a_batch_completion_stores_the_result_without_touching_any_gate(
    gate: SessionGate, redis_client: redis.Redis
) -> None:
    assert gate.complete("batch-1", RESULT, ttl=60) is CompletionOutcome.APPLIED
    assert gate.complete("batch-1", RESULT, ttl=60) is CompletionOutcome.LATE
    assert redis_client.llen(keys.result("batch-1")) == 1
    assert redis_client.keys("tersify:gate:*") == []


def test_complete_refuses_a_session_without_a_token(gate: SessionGate) -> None:
    with pytest.raises(ValueError, match="both session_id and token"):
        gate.complete("job-1", RESULT, ttl=60, session_id="s1")


def test_ids_that_would_break_the_index_are_refused(gate: SessionGate) -> None:
    with pytest.raises(InvalidJobError):
        gate.close_for("s1\njob", "job-1")
    with pytest.raises(InvalidJobError):
        gate.close_for("s1", "")


def test_claim_expired_hands_each_expired_hold_to_exactly_one_sweeper(make_gate: MakeGate) -> None:
    gate = make_gate(TINY)
    expected = {(f"s{i % 5}", f"job-{i}") for i in range(40)}
    for sid, job in expected:
        gate.close_for(sid, job, tool_type="SearchResults")
    time.sleep(0.35)

    def sweep() -> list[tuple[str, str]]:
        claimed = []
        while batch := gate.claim_expired(limit=3):
            claimed += [(hold.session_id, hold.job_id) for hold in batch]
        return claimed

    first, second = run_in_threads(sweep, sweep)
    assert isinstance(first, list) and isinstance(second, list)
    assert sorted(first + second) == sorted(expected)
    assert gate.claim_expired() == []
    assert all(gate.is_open(f"s{i}") for i in range(5))


def test_the_slow_workers_result_is_late_once_a_sweeper_took_its_job_over(
    make_gate: MakeGate, redis_client: redis.Redis
) -> None:
    gate = make_gate(TINY)
    original = gate.close_for("s1", "job-1", tool_type="CommandOutput")
    time.sleep(0.35)
    [hold] = gate.claim_expired()
    assert (hold.session_id, hold.job_id, hold.tool_type) == ("s1", "job-1", "CommandOutput")
    assert hold.token > original
    assert not gate.renew("s1", "job-1", original)
    slow = gate.complete("job-1", '{"text": "slow"}', ttl=60, session_id="s1", token=original)
    assert slow is CompletionOutcome.LATE
    swept = gate.complete(
        "job-1", '{"text": "fallback"}', ttl=60, session_id="s1", token=hold.token
    )
    assert swept is CompletionOutcome.APPLIED
    assert redis_client.lrange(keys.result("job-1"), 0, -1) == ['{"text": "fallback"}']
    assert redis_client.lrange(keys.late_result("job-1"), 0, -1) == ['{"text": "slow"}']
    assert gate.claim_expired() == []


def test_a_worker_that_finishes_before_any_sweeper_still_applies(make_gate: MakeGate) -> None:
    gate = make_gate(TINY)
    token = gate.close_for("s1", "job-1")
    time.sleep(0.35)
    assert gate.complete("job-1", RESULT, ttl=60, session_id="s1", token=token) == "applied"
    assert gate.claim_expired() == []


def test_a_claim_whose_sweeper_died_becomes_claimable_again(make_gate: MakeGate) -> None:
    gate = make_gate(TINY)
    gate.close_for("s1", "job-1")
    time.sleep(0.35)
    [dead] = gate.claim_expired(claim_seconds=0.2)
    assert gate.claim_expired() == []
    time.sleep(0.25)
    [alive] = gate.claim_expired()
    assert alive.token > dead.token
    late = gate.complete("job-1", RESULT, ttl=60, session_id="s1", token=dead.token)
    assert late is CompletionOutcome.LATE
    applied = gate.complete("job-1", RESULT, ttl=60, session_id="s1", token=alive.token)
    assert applied is CompletionOutcome.APPLIED


def test_held_input_comes_back_in_order_once_the_gate_opens(gate: SessionGate) -> None:
    token = gate.close_for("s1", "job-1")
    assert [gate.hold_input("s1", m) for m in ("one", "two", "three")] == [1, 2, 3]
    assert gate.take_held("s1") == []
    gate.release("s1", "job-1", token)
    assert gate.take_held("s1") == ["one", "two", "three"]
    assert gate.take_held("s1") == []


def test_held_input_past_the_count_cap_is_refused_and_leaves_the_ttl_alone(
    make_gate: MakeGate, redis_client: redis.Redis
) -> None:
    gate = make_gate(Settings(gate_max_held_inputs=3))
    gate.close_for("s1", "job-1")
    assert [gate.hold_input("s1", m) for m in ("a", "b", "c")] == [1, 2, 3]
    redis_client.pexpire(keys.gate_held("s1"), 50_000)
    with pytest.raises(HeldInputFullError) as refused:
        gate.hold_input("s1", "d")
    assert refused.value.status == 429
    assert redis_client.pttl(keys.gate_held("s1")) <= 50_000  # a refused push extends nothing
    assert redis_client.lrange(keys.gate_held("s1"), 0, -1) == ["a", "b", "c"]


def test_held_input_past_the_byte_cap_is_refused_and_a_take_makes_room(
    make_gate: MakeGate, redis_client: redis.Redis
) -> None:
    gate = make_gate(Settings(gate_max_held_bytes=4096))
    token = gate.close_for("s1", "job-1")
    assert gate.hold_input("s1", "é" * 1000) == 1  # 2,000 bytes: bytes count, not characters
    with pytest.raises(HeldInputFullError) as full:
        gate.hold_input("s1", "x" * 2100)
    with pytest.raises(HeldInputFullError) as alone:
        gate.hold_input("s1", "x" * 4097)
    assert (full.value.status, alone.value.status) == (429, 413)
    assert gate.status("s1").held_inputs == 1
    gate.release("s1", "job-1", token)
    assert gate.take_held("s1") == ["é" * 1000]
    assert not redis_client.exists(keys.gate_held_bytes("s1"))
    assert gate.hold_input("s1", "x" * 4096) == 1


def test_two_backends_racing_get_each_held_message_exactly_once(make_gate: MakeGate) -> None:
    gate = make_gate(Settings(gate_max_held_inputs=1000))
    messages = [f"message {i:03}" for i in range(300)]
    token = gate.close_for("s1", "job-1")
    produced = threading.Event()

    def produce() -> None:
        for i, message in enumerate(messages):
            gate.hold_input("s1", message)
            if i == 50:
                gate.release("s1", "job-1", token)
        produced.set()

    def drain() -> list[str]:
        taken: list[str] = []
        while not produced.is_set() or gate.status("s1").held_inputs:
            taken += gate.take_held("s1")
        return taken

    first, second, _ = run_in_threads(drain, drain, produce)
    assert isinstance(first, list) and isinstance(second, list)
    assert sorted(first + second) == messages
    assert first == sorted(first) and second == sorted(second)


def test_wait_open_returns_promptly_when_another_thread_releases(gate: SessionGate) -> None:
    token = gate.close_for("s1", "job-1")
    released_at: list[float] = []

    def release_soon() -> None:
        time.sleep(0.2)
        gate.release("s1", "job-1", token)
        released_at.append(time.monotonic())

    def wait() -> float:
        assert gate.wait_open("s1", timeout=10)
        return time.monotonic()

    opened_at, _ = run_in_threads(wait, release_soon)
    assert isinstance(opened_at, float)
    # well under the 1 s re-check: the notification, not the fallback poll, woke the waiter
    assert opened_at - released_at[0] < 0.5


def test_an_opening_is_announced_only_when_a_waiter_asked(
    gate: SessionGate, redis_client: redis.Redis
) -> None:
    listener = redis_client.pubsub()
    listener.subscribe(keys.gate_events("s1"))
    assert listener.get_message(timeout=1)["type"] == "subscribe"
    token = gate.close_for("s1", "job-1")
    assert gate.release("s1", "job-1", token)
    assert listener.get_message(timeout=0.3) is None  # nobody waited: nothing published
    token = gate.close_for("s1", "job-2")
    other = gate.close_for("s1", "job-3")
    assert gate.run(gate.calls.state("s1", waiting=True))[0] == 2  # a waiter asks
    assert gate.release("s1", "job-2", token)
    assert listener.get_message(timeout=0.3) is None  # job-3 still holds the gate
    assert gate.release("s1", "job-3", other)
    message = listener.get_message(timeout=1)
    assert message is not None and message["data"] == "open"
    assert redis_client.hget(keys.session("s1"), "waiting") == ""  # the ask is answered
    token = gate.close_for("s1", "job-4")
    assert gate.release("s1", "job-4", token)
    assert listener.get_message(timeout=0.3) is None
    listener.close()


def test_wait_open_returns_false_when_the_timeout_passes(gate: SessionGate) -> None:
    gate.close_for("s1", "job-1")
    started = time.monotonic()
    assert not gate.wait_open("s1", timeout=0.3)
    assert 0.3 <= time.monotonic() - started < 1.0


def test_wait_open_returns_true_when_a_lease_expires_with_nobody_publishing(
    make_gate: MakeGate,
) -> None:
    gate = make_gate(TINY)
    gate.close_for("s1", "job-1")
    started = time.monotonic()
    assert gate.wait_open("s1", timeout=5)
    assert time.monotonic() - started < 0.3 + 0.2


def test_status_reports_live_holds_and_held_input(gate: SessionGate) -> None:
    token = gate.close_for("s1", "job-1", tool_type="FileContent", cap_seconds=30)
    gate.hold_input("s1", "hello")
    status = gate.status("s1")
    assert status.session_id == "s1"
    assert not status.open
    assert status.held_inputs == 1
    [job] = status.jobs
    assert (job.job_id, job.tool_type, job.token) == ("job-1", "FileContent", token)
    assert 0 <= job.age_seconds < 1
    assert 14 < job.expires_in_seconds <= 15


def test_every_key_of_a_sessions_gate_has_a_ttl_and_the_shared_index_only_names_holders(
    make_gate: MakeGate, redis_client: redis.Redis
) -> None:
    gate = make_gate(TINY)
    gate.close_for("s1", "job-1")
    token = gate.close_for("s2", "job-2")
    gate.renew("s2", "job-2", token)
    gate.hold_input("s1", "wait for me")
    gate.close_for("s3", "job-3", cap_seconds=0.1)
    time.sleep(0.15)
    assert gate.claim_expired()
    due = keys.gate_due()
    found = [k for k in redis_client.scan_iter("tersify:*") if k != due]
    assert len(found) >= 5  # three sessions' hashes, s1's held input and its size
    assert {key: redis_client.pttl(key) > 0 for key in found} == dict.fromkeys(found, True)
    assert set(redis_client.zrange(due, 0, -1)) == {"s1", "s2", "s3"}
    gate.release("s1", "job-1", 1)
    gate.release("s2", "job-2", token)
    assert redis_client.zrange(due, 0, -1) == ["s3"]  # claimed, not yet finished


def test_an_unreachable_redis_raises_redis_unavailable_without_the_password(
    dead_client: redis.Redis,
) -> None:
    gate = SessionGate(dead_client, Settings())
    for call in (
        lambda: gate.close_for("s1", "job-1"),
        lambda: gate.renew("s1", "job-1", 1),
        lambda: gate.complete("job-1", RESULT, ttl=60),
        lambda: gate.take_held("s1"),
    ):
        with pytest.raises(RedisUnavailableError) as caught:
            call()
        assert "hunter2" not in str(caught.value)


def test_an_unreachable_redis_reads_open_and_logs_loudly_when_failing_open(
    dead_client: redis.Redis,
) -> None:
    gate = SessionGate(dead_client, Settings(gate_fail_open=True))
    with capture_logs() as logs:
        assert gate.is_open("s1")
        assert gate.wait_open("s1", timeout=1)
    assert [(e["event"], e["log_level"]) for e in logs] == [("gate_redis_unavailable", "error")] * 2
    assert all("hunter2" not in str(e) for e in logs)


def test_an_unreachable_redis_raises_on_reads_when_failing_closed(
    dead_client: redis.Redis,
) -> None:
    gate = SessionGate(dead_client, Settings(gate_fail_open=False))
    with pytest.raises(RedisUnavailableError):
        gate.is_open("s1")
    with pytest.raises(RedisUnavailableError):
        gate.wait_open("s1", timeout=1)


def test_the_gate_reads_open_and_works_again_after_a_redis_restart(
    redis_server: LocalRedis, redis_client: redis.Redis
) -> None:
    gate = SessionGate(redis_client, Settings())
    gate.close_for("s1", "job-1")
    assert not gate.is_open("s1")
    redis_server.restart()  # no persistence: every hold is gone, and so is the script cache
    assert gate.is_open("s1")
    token = gate.close_for("s1", "job-2")
    assert not gate.is_open("s1")
    assert gate.complete("job-2", RESULT, ttl=60, session_id="s1", token=token) == "applied"
    assert gate.is_open("s1")


def test_the_async_gate_closes_renews_completes_and_wakes_its_waiter(
    redis_server: LocalRedis, redis_client: redis.Redis
) -> None:
    async def scenario() -> None:
        client = redis.asyncio.Redis.from_url(redis_server.url, decode_responses=True)
        try:
            gate = AsyncSessionGate(client, Settings())
            token = await gate.close_for("s1", "job-1", tool_type="WebContent")
            assert not await gate.is_open("s1")
            assert await gate.renew("s1", "job-1", token)
            assert await gate.hold_input("s1", "later") == 1
            assert await gate.take_held("s1") == []
            assert (await gate.status("s1")).jobs[0].tool_type == "WebContent"
            assert not await gate.wait_open("s1", timeout=0.1)
            waiter = asyncio.create_task(gate.wait_open("s1", timeout=5))
            await asyncio.sleep(0.05)
            outcome = await gate.complete("job-1", RESULT, ttl=60, session_id="s1", token=token)
            assert outcome is CompletionOutcome.APPLIED
            assert await asyncio.wait_for(waiter, timeout=0.5)
            assert await gate.take_held("s1") == ["later"]
            assert await gate.claim_expired() == []
            assert not await gate.release("s1", "job-1", token)
            assert not await gate.reopen_for("s1", "job-1", token)
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_the_async_gate_fails_open_on_an_unreachable_redis(dead_url: str) -> None:
    async def scenario() -> None:
        client = redis.asyncio.Redis.from_url(dead_url, retry=Retry(NoBackoff(), 0))
        try:
            gate = AsyncSessionGate(client, Settings(gate_fail_open=True))
            assert await gate.is_open("s1")
            assert await gate.wait_open("s1", timeout=1)
            with pytest.raises(RedisUnavailableError):
                await gate.close_for("s1", "job-1")
        finally:
            await client.aclose()

    asyncio.run(scenario())
