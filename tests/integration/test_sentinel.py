"""Redis Sentinel: jobs run through a watched primary and end exactly once across a fail-over.

A real primary, a replica and three ``redis-sentinel`` processes; the primary is SIGKILLed while
jobs are in flight and more are being submitted. Replication is asynchronous, so a write the
primary acknowledged in its last instant may be gone: the client behaves as a backend does (it
submits again a job whose result does not come back, at most once) and the test counts that.
"""

from __future__ import annotations

import asyncio
import gc
import json
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pydantic import SecretStr

from tersify.client import AsyncProducer, Producer
from tersify.contract import Method, SummaryResult
from tersify.errors import ResultTimeoutError
from tersify.settings import Settings
from tersify.store import keys
from tersify.store.redis_url import redis_client
from tersify.worker.processes.redis_sentinel import SentinelGroup
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, ok
from tests.helpers import tersify, wait_for
from tests.integration.conftest import provider_env

PRIMARY_PASSWORD = "primary-pw-7f3a9c51e2"
SENTINEL_PASSWORD = "sentinel-pw-0b8d44e6a1"
WRONG = "wrong-pw-3e5f0a9d77"
LOG = "\n".join(f"line {i}: compiling module_{i}" for i in range(400)) + "\nerror: linker failed\n"
SESSIONS = 6


@pytest.fixture
def group() -> Iterator[SentinelGroup]:
    """A primary, its replica and three sentinels, all with passwords."""
    with SentinelGroup(PRIMARY_PASSWORD, SENTINEL_PASSWORD) as started:
        yield started


@pytest.fixture
def sentinel_settings(group: SentinelGroup, tmp_path: Path) -> Settings:
    """Settings naming the group by its ``sentinel://`` URL, the passwords apart."""
    return Settings(
        redis_url=group.url,
        redis_password=SecretStr(PRIMARY_PASSWORD),
        redis_sentinel_password=SecretStr(SENTINEL_PASSWORD),
        session_log_dir=tmp_path / "sessions",
    )


def start_worker(settings: Settings, fake: FakeModelServer, tmp_path: Path) -> WorkerProcess:
    """A worker on the group, the model faked."""
    return WorkerProcess(
        settings,
        tmp_path,
        **provider_env(fake, "anthropic"),
        redis_password=PRIMARY_PASSWORD,
        redis_sentinel_password=SENTINEL_PASSWORD,
        session_log_dir=str(settings.session_log_dir),
        log_format="json",
    ).start()


def run_job(producer: Producer, n: int, resubmits: list[int]) -> list[SummaryResult]:
    """Submit job ``n`` and wait; once more with the same output if no result came back."""
    output = f"{LOG}job {n}\n"
    for attempt in range(2):
        handle = producer.submit(session_id=f"s-{n % SESSIONS}", tool_name="bash", output=output)
        try:
            return [handle.wait(45)]
        except ResultTimeoutError:
            resubmits.append(n)
            assert attempt == 0, f"job {n} did not come back twice"
    raise AssertionError("unreachable")


@pytest.mark.slow
def test_jobs_end_exactly_once_when_the_primary_is_killed_mid_load(
    group: SentinelGroup, sentinel_settings: Settings, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    fake_model.set_default(ok(latency=0.5))
    worker = start_worker(sentinel_settings, fake_model, tmp_path)
    resubmits: list[int] = []
    try:
        with Producer(sentinel_settings) as producer, ThreadPoolExecutor(24) as pool:
            before = [pool.submit(run_job, producer, n, resubmits) for n in range(12)]
            wait_for(lambda: fake_model.request_count >= 4, "jobs in flight", timeout=30)
            group.kill_primary()
            during = [pool.submit(run_job, producer, n, resubmits) for n in range(12, 24)]
            results = [r for f in before + during for r in f.result(timeout=180)]
            group.wait_for_failover()
            client = redis_client(sentinel_settings, decode=True)
            try:
                stored = [client.llen(keys.result(r.job_id)) for r in results]
            finally:
                client.close()
            assert all(producer.gate.wait_open(f"s-{s}", 20) for s in range(SESSIONS))
            after = producer.submit(session_id="after", tool_name="bash", output=LOG).wait(30)
        assert worker.alive()
    finally:
        worker.stop()
    assert len(results) == 24 and len(resubmits) <= 2, resubmits
    assert len({r.job_id for r in results}) == 24
    assert stored == [1] * 24  # each result stored once, on the new primary
    assert all(r.method in {Method.LLM, Method.FALLBACK} for r in results)
    assert after.method is Method.LLM
    assert group.primary_port() == group.replica.port


def test_the_cli_and_the_worker_check_reach_the_primary_and_never_show_a_password(
    group: SentinelGroup, sentinel_settings: Settings, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    worker = start_worker(sentinel_settings, fake_model, tmp_path)
    env = {"redis_password": PRIMARY_PASSWORD, "redis_sentinel_password": SENTINEL_PASSWORD}
    try:
        done = tersify(
            sentinel_settings, "submit", "-", "--tool", "bash", "--json", stdin=LOG, **env
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["method"] == Method.LLM
        check = tersify(
            sentinel_settings, "worker", "--check", "--hostname", worker.hostname, **env
        )
        assert check.returncode == 0, check.stdout + check.stderr
        status = tersify(sentinel_settings, "status", "--json", **env)
        assert status.returncode == 0
        assert [w["hostname"] for w in json.loads(status.stdout)["workers"]] == [worker.hostname]
        refused = {**env, "redis_password": WRONG, "redis_failover_seconds": "1"}
        wrong = tersify(sentinel_settings, "status", "--json", **refused)
        assert wrong.returncode != 0
    finally:
        worker.stop()
    seen = worker.log() + done.stderr + check.stdout + status.stderr + wrong.stdout + wrong.stderr
    for password in (PRIMARY_PASSWORD, SENTINEL_PASSWORD, WRONG):
        assert password not in seen


def unexplained_leaks(seen: list[warnings.WarningMessage], group: SentinelGroup) -> list[str]:
    """The warnings that are not redis-py dropping a connection to one of the group's servers.

    A dropped connection warns for itself, then for its socket, transport and stream writer
    (those name no server). Anything else fails the test: a connection of tersify's own pool
    (its class is named in the warning), or one to another server.
    """
    ports = {group.primary.port, group.replica.port, *(s.port for s in group.sentinels)}
    servers = tuple(f"port={port}," for port in ports) + tuple(f", {port})>" for port in ports)
    follows = ("unclosed transport <_SelectorSocketTransport", "loop is closed")
    texts = [str(w.message) for w in seen]
    drops = [t for t in texts if t.startswith(("unclosed Connection", "unclosed <socket"))]
    return [
        text
        for text in texts
        if not (text in drops and any(server in text for server in servers))
        and not (drops and text.startswith(follows))
    ]


def test_the_async_producers_waits_resume_on_the_new_primary(
    group: SentinelGroup, sentinel_settings: Settings, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    fake_model.set_default(ok(latency=1.5))
    worker = start_worker(sentinel_settings, fake_model, tmp_path)

    async def scenario() -> list[SummaryResult]:
        async with AsyncProducer(sentinel_settings) as producer:
            handles = [
                await producer.submit(session_id=f"a-{n}", tool_name="bash", output=f"{LOG}{n}\n")
                for n in range(4)
            ]
            waits = [asyncio.ensure_future(h.wait(60)) for h in handles]
            await asyncio.to_thread(wait_for, lambda: fake_model.request_count >= 4, "calls", 30)
            group.kill_primary()  # every wait is blocked on the primary now
            results = list(await asyncio.gather(*waits))
            assert all([await producer.gate.wait_open(f"a-{n}", 20) for n in range(4)])
            return results

    try:
        # Under load, redis-py's asyncio client can drop connections it made during the fail-over
        # without closing them, and the collector may find them at any point of the run: record
        # the warnings over the whole run, so none is blamed on a later test, and check them.
        with warnings.catch_warnings(record=True) as dropped:
            warnings.simplefilter("always", ResourceWarning)
            results = asyncio.run(scenario())
            gc.collect()
        assert worker.alive()
    finally:
        worker.stop()
    assert unexplained_leaks(dropped, group) == []
    assert sorted(r.session_id for r in results) == [f"a-{n}" for n in range(4)]
    assert all(r.method is Method.LLM for r in results)
    assert group.primary_port() == group.replica.port
