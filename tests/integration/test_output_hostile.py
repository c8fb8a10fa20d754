"""``tersify output`` and reads of full outputs against odd arguments, with a real worker, Redis and
API: out-of-range lines are usage errors, empty reads count as no re-read, and a shell given an
API URL and a scoped token reads its own session's outputs and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import redis

from tersify.client import Producer
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import tersify
from tests.integration.test_api import ApiServer
from tests.integration.test_outputs import OUTPUT
from tests.integration.test_rereads import counts, summarized

StartWorker = Callable[..., WorkerProcess]


def test_a_from_line_out_of_range_is_a_usage_error(
    producer: Producer, start_worker: StartWorker, settings: Settings
) -> None:
    start_worker()
    ref = summarized(producer, "reads").output_ref
    assert ref is not None
    total = len(OUTPUT.splitlines())
    for first, grep in (
        ("99999999999999999999", "x"),
        ("99999999999999999999", None),
        (str(2**31 + 2), None),
        (str(total + 5), None),
        (str(total + 5), "commit"),
        ("0", None),
        ("-3", "x"),
    ):
        args = ["output", ref, "--from", first, *(("--grep", grep) if grep else ())]
        ran = tersify(settings, *args)
        assert ran.returncode == 2, (first, grep, ran.stderr)
        assert "--from" in ran.stderr and "Traceback" not in ran.stderr
    assert tersify(settings, "output", ref, "--from", str(total)).returncode == 0


def test_a_read_that_finds_nothing_is_not_counted_as_a_reread(
    producer: Producer, start_worker: StartWorker, redis_client: redis.Redis
) -> None:
    start_worker()
    done = summarized(producer, "reads")
    ref = done.output_ref
    assert ref is not None
    total = len(OUTPUT.splitlines())
    assert producer.read_output(ref, grep="no line holds this text").lines == ()
    assert producer.read_output(ref, total, 5).lines == ()
    assert producer.read_output(ref, total + 10, 5, grep="e").lines == ()
    assert counts(redis_client, keys.REREADS) == {}
    assert counts(redis_client, keys.REREAD_SUMMARIES) == {}
    assert producer.read_output(ref, total - 1, 5).lines != ()  # one line read back: counted
    assert sum(counts(redis_client, keys.REREADS).values()) == 1
    assert sum(counts(redis_client, keys.REREAD_SUMMARIES).values()) == 1


def test_a_shell_with_an_api_url_and_a_scoped_token_reads_its_sessions_outputs_only(
    producer: Producer, start_worker: StartWorker, settings: Settings, tmp_path: Path
) -> None:
    start_worker()
    mine = summarized(producer, "agent-7/s1").output_ref
    theirs = summarized(producer, "agent-8/s1").output_ref
    assert mine is not None and theirs is not None
    token = "tok-agent-7-0123456789abcdef"
    api = ApiServer(settings, tmp_path, workers=1, api_tokens=f"{token}:agent-7/*").start()
    try:
        shell = {
            "api_url": api.url + "/",
            "api_token": token,
            "redis_url": "redis://127.0.0.1:9/0",  # nothing listens: Redis is never read
        }
        own = tersify(settings, "output", mine, "--from", "2", "--limit", "3", **shell)
        other = tersify(settings, "output", theirs, **shell)
        wrong = tersify(settings, "output", mine, **{**shell, "api_token": "tok-nobody-00000000"})
        found = tersify(settings, "output", mine, "--grep", "commit", "--json", **shell)
    finally:
        api.stop()
    assert own.returncode == 0, own.stderr
    assert own.stdout == tersify(settings, "output", mine, "--from", "2", "--limit", "3").stdout
    assert [line.split("\t")[0].strip() for line in own.stdout.splitlines()] == ["2", "3", "4"]
    assert other.returncode == 1 and "no output" in other.stderr
    assert wrong.returncode == 1 and "refused the token" in wrong.stderr
    assert found.returncode == 0 and '"grep":"commit"' in found.stdout
