"""The session log rotates by size, keeps files for the retention period, and forgets sessions."""

from __future__ import annotations

import os
import random
from pathlib import Path

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tersify.contract import PendingSummary
from tersify.worker.redact import Redactor, Scope
from tersify.worker.store.sessionlog import (
    SessionLog,
    forget_files,
    read_entries,
    session_file,
    session_files,
)
from tests import fakesecrets

DAY = 86_400.0


def job(session_id: str, output: str) -> PendingSummary:
    return PendingSummary.build(
        deadline_seconds=30, session_id=session_id, tool_name="bash", output=output
    )


def make_log(directory: Path, client: redis.Redis, **options: object) -> SessionLog:
    return SessionLog(directory, client, marker_ttl=60, **options)  # type: ignore[arg-type]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.integers(min_value=1, max_value=3000), min_size=1, max_size=40))
def test_a_log_past_its_size_rotates_and_every_entry_is_kept_once(
    tmp_path_factory, redis_client: redis.Redis, sizes: list[int]
) -> None:
    directory = tmp_path_factory.mktemp("logs")
    redis_client.flushall()
    log = make_log(directory, redis_client, max_bytes=8192)
    jobs = [job("s1", "x" * size) for size in sizes]
    for each in jobs:
        log.append_output(each)
    files = session_files(directory, "s1")
    assert files[-1] == session_file(directory, "s1")
    lines = [e["job_id"] for path in files for e in read_entries(path)]
    assert sorted(lines) == sorted(each.job_id for each in jobs)
    assert all(0 < path.stat().st_size <= 8192 for path in files[:-1])  # cut before overflowing


def test_files_untouched_past_the_retention_period_are_deleted(
    tmp_path: Path, redis_client: redis.Redis
) -> None:
    log = make_log(tmp_path, redis_client, retention_days=30)
    now = 1_900_000_000.0
    for name, age_days in (("old", 31), ("edge", 29.9), ("new", 0)):
        log.append_output(job(name, "output"))
        path = session_file(tmp_path, name)
        os.utime(path, (now - age_days * DAY, now - age_days * DAY))
    assert log.prune(now=now) == 1
    assert sorted(p.stem for p in tmp_path.glob("*.jsonl")) == ["edge", "new"]
    assert log.prune(now=now + 0.2 * DAY) == 1
    assert make_log(tmp_path, redis_client, retention_days=0).prune(now=now + 99 * DAY) == 0


def test_forget_deletes_a_sessions_files_and_only_those(
    tmp_path: Path, redis_client: redis.Redis
) -> None:
    log = make_log(tmp_path, redis_client, max_bytes=4096)
    for index in range(6):
        log.append_output(job("gone", "y" * 3000 + str(index)))
    log.append_output(job("gone.kept", "z" * 100))
    assert len(session_files(tmp_path, "gone")) == 6
    assert forget_files(tmp_path, "gone") == 6
    assert session_files(tmp_path, "gone") == []
    assert [p.name for p in tmp_path.iterdir()] == [session_file(tmp_path, "gone.kept").name]


def test_under_log_redaction_the_session_log_holds_placeholders(
    tmp_path: Path, redis_client: redis.Redis
) -> None:
    _command, text, secrets = fakesecrets.command_output(random.Random(4), "env")
    log = make_log(tmp_path, redis_client, redact=frozenset({Scope.LOG}))
    log.append_output(job("s", text), redactor=Redactor(frozenset({Scope.LOG})))
    written = session_file(tmp_path, "s").read_text()
    assert "[secret:" in written
    assert not [part for secret in secrets for part in secret.vanish if part in written]
