"""The spill store, against a real Redis."""

from __future__ import annotations

import re
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from structlog.testing import capture_logs

from tersify.errors import InvalidJobError, JobNotFoundError, RedisUnavailableError
from tersify.store import keys
from tersify.text import truncate
from tersify.text.spill import SpillStore
from tersify.worker.processes.redis_server import LocalRedis, free_port


def numbered(count: int) -> str:
    return "".join(f"line {i}\n" for i in range(count))


@pytest.fixture
def store(redis_client: redis.Redis) -> SpillStore:
    return SpillStore(redis_client, ttl_seconds=600)


def test_save_returns_a_distinct_unguessable_ref_each_time(store: SpillStore) -> None:
    refs = {store.save("s1", "same text") for _ in range(20)}
    assert len(refs) == 20
    assert all(re.fullmatch(r"[0-9a-f]{32}", ref) for ref in refs)


def test_save_stores_the_full_text_and_session_with_a_ttl(
    store: SpillStore, redis_client: redis.Redis
) -> None:
    ref = store.save("sess-1", "full\ntext")
    key = keys.spill(ref)
    assert redis_client.hgetall(key) == {"session_id": "sess-1", "text": "full\ntext"}
    assert 0 < int(redis_client.ttl(key)) <= 600


def test_read_spill_returns_a_line_range_the_total_and_whether_more_remains(
    store: SpillStore,
) -> None:
    ref = store.save("s1", numbered(10))
    window = store.read_spill(ref, offset=2, limit=3)
    assert window.lines == ("line 2", "line 3", "line 4")
    assert window.total_lines == 10
    assert window.has_more
    assert window.next_offset == 5
    assert window.text == "line 2\nline 3\nline 4"


def test_read_spill_defaults_to_the_start_and_reports_the_end(store: SpillStore) -> None:
    ref = store.save("s1", numbered(10))
    window = store.read_spill(ref)
    assert len(window.lines) == 10
    assert not window.has_more
    assert window.next_offset is None


def test_read_spill_past_the_end_is_empty_with_nothing_more(store: SpillStore) -> None:
    ref = store.save("s1", numbered(3))
    window = store.read_spill(ref, offset=50, limit=10)
    assert window.lines == ()
    assert window.total_lines == 3
    assert not window.has_more


def test_read_spill_with_a_zero_limit_only_reports_the_size(store: SpillStore) -> None:
    ref = store.save("s1", numbered(3))
    window = store.read_spill(ref, offset=0, limit=0)
    assert window.lines == ()
    assert window.has_more


def test_read_spill_keeps_an_unterminated_last_line_and_multibyte_text(store: SpillStore) -> None:
    ref = store.save("s1", "一\n🙂 two\nthree")
    assert store.read_spill(ref).lines == ("一", "🙂 two", "three")


def test_read_spill_of_an_unknown_ref_raises_job_not_found(store: SpillStore) -> None:
    with pytest.raises(JobNotFoundError, match="unknown or expired"):
        store.read_spill("0" * 32)


def test_read_spill_of_an_expired_ref_raises_job_not_found(redis_client: redis.Redis) -> None:
    store = SpillStore(redis_client, ttl_seconds=1)
    ref = store.save("s1", "soon gone")
    redis_client.pexpire(keys.spill(ref), 1)
    time.sleep(0.01)
    with pytest.raises(JobNotFoundError):
        store.read_spill(ref)


def test_read_spill_refuses_a_negative_offset_or_limit(store: SpillStore) -> None:
    ref = store.save("s1", "x")
    with pytest.raises(InvalidJobError):
        store.read_spill(ref, offset=-1)
    with pytest.raises(InvalidJobError):
        store.read_spill(ref, limit=-1)


def test_read_spill_hides_another_sessions_output_when_a_session_is_given(
    store: SpillStore,
) -> None:
    ref = store.save("owner", "secret")
    assert store.read_spill(ref, session_id="owner").lines == ("secret",)
    with pytest.raises(JobNotFoundError):
        store.read_spill(ref, session_id="intruder")


def test_the_spill_callback_lets_a_model_read_back_what_truncate_elided(
    store: SpillStore,
) -> None:
    text = numbered(5000)
    out = truncate(text, 4000, 200, spill=store.spill_callback("s1"))
    ref = re.search(r"full output: ([0-9a-f]{32}) — read it with offset/limit", out)
    assert ref is not None
    middle = store.read_spill(ref.group(1), offset=2500, limit=2)
    assert middle.lines == ("line 2500", "line 2501")
    assert middle.total_lines == 5000


def test_the_store_works_with_a_client_that_returns_bytes(redis_server: LocalRedis) -> None:
    client = redis.Redis.from_url(redis_server.url)
    try:
        store = SpillStore(client, ttl_seconds=60)
        ref = store.save("s1", "é\nb")
        assert store.read_spill(ref, session_id="s1").lines == ("é", "b")
    finally:
        client.close()


def test_an_unreachable_redis_raises_redis_unavailable_and_the_callback_returns_none() -> None:
    no_retry = Retry(NoBackoff(), retries=0)
    client = redis.Redis(port=free_port(), socket_connect_timeout=0.5, retry=no_retry)
    store = SpillStore(client, ttl_seconds=60)
    with pytest.raises(RedisUnavailableError):
        store.save("s1", "x")
    with pytest.raises(RedisUnavailableError):
        store.read_spill("0" * 32)
    with capture_logs() as logs:
        out = truncate(numbered(1000), 2000, 50, spill=store.spill_callback("s1"))
    assert "full output" not in out
    assert [e["event"] for e in logs] == ["spill_failed"]
    client.close()


def test_a_ttl_below_one_second_is_refused(redis_client: redis.Redis) -> None:
    with pytest.raises(ValueError, match="ttl_seconds"):
        SpillStore(redis_client, ttl_seconds=0)
