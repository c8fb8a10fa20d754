"""Ids chosen to collide: look-alike session ids, job ids of other sessions, junk job ids."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable

import pytest
import redis
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tersify.client import AsyncProducer, Producer
from tersify.errors import InvalidJobError
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.store.sessionlog import read_entries, session_file
from tests.helpers import wait_for

StartWorker = Callable[..., WorkerProcess]
LONG_OUTPUT = "".join(f"line {i}: ERROR step {i} failed\n" for i in range(200))


def test_two_look_alike_sessions_are_logged_to_two_files(
    start_worker: StartWorker, producer: Producer, settings: Settings
) -> None:
    dotted = ".abc"
    # the plain name the old scheme gave ".abc" (its hash suffix), used as a session id itself
    look_alike = f"abc-{hashlib.sha256(dotted.encode()).hexdigest()[:12]}"
    start_worker()
    for session_id in (dotted, look_alike):
        producer.submit(session_id=session_id, tool_name="bash", output=LONG_OUTPUT).wait(30)
    directory = settings.session_log_dir
    paths = {s: session_file(directory, s) for s in (dotted, look_alike)}
    assert paths[dotted] != paths[look_alike]

    def logged(session_id: str) -> set[str]:
        path = paths[session_id]
        return {e["session_id"] for e in read_entries(path)} if path.exists() else set()

    for session_id in paths:
        wait_for(lambda s=session_id: logged(s), f"{session_id}'s log", timeout=60)
        assert logged(session_id) == {session_id}
    assert sorted(p.name for p in directory.iterdir()) == sorted(p.name for p in paths.values())


def test_a_job_id_of_another_session_is_refused_and_leaves_both_gates_as_they_were(
    producer: Producer, redis_client: redis.Redis
) -> None:
    theirs = producer.submit(session_id="victim", tool_name="bash", output=LONG_OUTPUT)
    record = redis_client.get(keys.job_meta(theirs.job_id))
    with pytest.raises(InvalidJobError, match="another session"):
        producer.submit(
            session_id="intruder", tool_name="bash", output=LONG_OUTPUT, job_id=theirs.job_id
        )
    assert producer.gate.is_open("intruder")  # no hold was taken, none is left
    assert [j.job_id for j in producer.gate.status("victim").jobs] == [theirs.job_id]
    assert redis_client.get(keys.job_meta(theirs.job_id)) == record


def test_the_same_session_may_submit_its_own_job_id(producer: Producer) -> None:
    handle = producer.submit(
        session_id="own", tool_name="bash", output=LONG_OUTPUT, job_id="my-job-0001"
    )
    assert handle.job_id == "my-job-0001"
    assert [j.job_id for j in producer.gate.status("own").jobs] == ["my-job-0001"]


@hsettings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.text(max_size=7),
        st.text(min_size=65, max_size=80),
        st.text(min_size=8, max_size=64).filter(
            lambda s: any(not (c.isascii() and (c.isalnum() or c in "_-")) for c in s)
        ),
    )
)
def test_a_job_id_that_is_not_8_to_64_url_safe_characters_is_refused(
    producer: Producer, redis_client: redis.Redis, job_id: str
) -> None:
    with pytest.raises(InvalidJobError):
        producer.submit(session_id="junk", tool_name="bash", output=LONG_OUTPUT, job_id=job_id)
    assert producer.gate.is_open("junk")
    assert not redis_client.keys("tersify:job:*")


def test_the_async_producer_refuses_another_sessions_job_id_too(
    producer: Producer, settings: Settings
) -> None:
    theirs = producer.submit(session_id="victim", tool_name="bash", output=LONG_OUTPUT)

    async def intrude() -> None:
        async with AsyncProducer(settings) as aio:
            await aio.submit(
                session_id="intruder", tool_name="bash", output=LONG_OUTPUT, job_id=theirs.job_id
            )

    with pytest.raises(InvalidJobError, match="another session"):
        asyncio.run(intrude())
    assert producer.gate.is_open("intruder")
