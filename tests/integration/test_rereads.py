"""Re-reads counted against the job that made the summary, through every read path, with a real
worker and Redis: the counters, ``status --json``, the worker's metrics and the kept lines."""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis

from tersify.client import AsyncProducer, Producer
from tersify.client.rereads import field
from tersify.contract import SummaryResult
from tersify.errors import JobNotFoundError
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.store.sessionlog import read_entries, session_file
from tests import fakesecrets
from tests.helpers import free_port, tersify, tersify_argv, wait_for
from tests.integration.test_api import SCOPED, TOKENS, ApiServer, client
from tests.integration.test_mcp_proxy import COMMITS, GIT_SERVER, repository, session, text_of
from tests.integration.test_metrics import scrape, total
from tests.integration.test_outputs import OUTPUT

StartWorker = Callable[..., WorkerProcess]
__all__ = ["repository"]  # the fixture, imported for the MCP test


def summarized(producer: Producer, session_id: str, tail: str = "") -> SummaryResult:
    """Submit OUTPUT (plus ``tail``) and wait for its summary."""
    result = producer.submit(session_id=session_id, tool_name="git_log", output=OUTPUT + tail)
    done = result.wait(30)
    assert done.output_ref is not None
    return done


def counts(client: redis.Redis, key: str) -> dict[str, int]:
    """A counter hash as ints."""
    return {str(k): int(v) for k, v in client.hgetall(key).items()}


async def read_async(settings: Settings, ref: str) -> int:
    """One read through the asyncio producer; how many lines came back."""
    async with AsyncProducer(settings) as producer:
        found = await producer.read_output(ref, 100, 5, session_id="team-a/s1")
    return len(found.lines)


def test_every_read_path_counts_against_the_job_and_shows_in_status_and_metrics(
    producer: Producer,
    start_worker: StartWorker,
    settings: Settings,
    redis_client: redis.Redis,
    tmp_path: Path,
) -> None:
    port = free_port()
    start_worker(metrics_port=str(port))
    read = summarized(producer, "team-a/s1")
    summarized(producer, "team-a/s2", tail="never read back\n")
    kind = field(read.tool_type.value, read.method.value)
    ref = str(read.output_ref)

    assert len(producer.read_output(ref, 0, 3).lines) == 3  # the blocking producer
    assert asyncio.run(read_async(settings, ref)) == 5  # the asyncio producer
    printed = tersify(settings, "output", ref, "--grep", "thing 250")  # the CLI
    assert printed.returncode == 0 and printed.stdout.startswith("250\t"), printed.stderr
    api = ApiServer(settings, tmp_path, workers=1, api_tokens=TOKENS).start()
    try:
        with client(api, SCOPED) as http:  # the HTTP API
            assert http.get(f"/v1/outputs/{ref}", params={"limit": 2}).status_code == 200
            assert http.get(f"/v1/outputs/{'0' * 32}").status_code == 404
    finally:
        api.stop()
    with pytest.raises(JobNotFoundError):  # a refused read counts nothing
        producer.read_output(ref, session_id="team-b/s1")

    assert counts(redis_client, keys.REREADS) == {kind: 4}
    assert counts(redis_client, keys.REREAD_SUMMARIES) == {kind: 1}
    wait_for(lambda: counts(redis_client, keys.SUMMARIES) == {kind: 2}, "summaries counted")
    assert redis_client.llen(keys.PASSTHROUGH_LOG) == 0  # lines are kept only when asked

    status = json.loads(tersify(settings, "status", "--json").stdout)["rereads"]
    assert (status["summaries"], status["reread"], status["share"]) == (2, 1, 0.5)
    assert status["total"] == {"summaries": 2, "reread": 1, "reads": 4, "share": 0.5}
    [row] = status["by_kind"]
    assert (row["tool_type"], row["method"]) == (read.tool_type.value, read.method.value)

    samples = scrape(port)
    labels = {"tool_type": read.tool_type.value, "method": read.method.value}
    assert total(samples, "tersify_rereads_total", **labels) == 4
    assert total(samples, "tersify_reread_summaries_total", **labels) == 1
    assert total(samples, "tersify_summaries_total", **labels) == 2


async def proxy_reads(repo: Path, settings: Settings) -> list[Any]:
    """A large git_log through the proxy, then two good reads and one foreign one."""
    env = settings.child_env(redis_url=settings.redis_url, log_format="json")
    proxy = tersify_argv("mcp-proxy", "--", *GIT_SERVER, "--repository", str(repo))
    async with session(proxy, env) as proxied:
        summary = await proxied.call_tool("git_log", {"repo_path": str(repo), "max_count": COMMITS})
        found = re.search(r'ref="([0-9a-f]{32})"', text_of(summary))
        assert found, text_of(summary)
        ref = found.group(1)
        return [
            await proxied.call_tool("tersify_read", {"ref": ref, "offset": 10, "limit": 3}),
            await proxied.call_tool("tersify_read", {"ref": ref, "pattern": "Change 42:"}),
            await proxied.call_tool("tersify_read", {"ref": "0" * 32}),
        ]


def test_the_mcp_proxys_tersify_read_counts_against_the_proxys_job(
    repository: Path, settings: Settings, start_worker: StartWorker, redis_client: redis.Redis
) -> None:
    start_worker()
    answers = anyio.run(proxy_reads, repository, settings)
    assert [a.is_error for a in answers] == [False, False, True]
    [(kind, reads)] = counts(redis_client, keys.REREADS).items()
    assert reads == 2 and counts(redis_client, keys.REREAD_SUMMARIES) == {kind: 1}
    wait_for(lambda: counts(redis_client, keys.SUMMARIES) == {kind: 1}, "summary counted")


def test_kept_read_lines_land_beside_the_job_in_the_session_log_redacted(
    start_worker: StartWorker, settings: Settings
) -> None:
    rng = random.Random(33)
    _command, leaky, shown = fakesecrets.command_output(rng, "env")
    secrets = [part for secret in shown for part in secret.vanish]
    lines = [f"{i:04d} filler line for a long listing {i}" for i in range(400)]
    output = "\n".join([*lines[:200], *leaky.splitlines(), *lines[200:]]) + "\n"
    start_worker(redact="model,log")
    keeping = settings.model_copy(update={"keep_read_lines": True})
    with Producer(keeping) as producer:
        result = producer.submit(session_id="kept", tool_name="bash", output=output).wait(30)
        ref = str(result.output_ref)
        first = producer.read_output(ref, 195, 20)
        second = producer.read_output(ref, grep="filler line for a long listing 399")
    path = session_file(settings.session_log_dir, "kept")

    def rereads() -> list[dict[str, Any]]:
        found = list(read_entries(path)) if path.exists() else []
        return [e for e in found if e["kind"] == "reread"]

    kept = wait_for(lambda: len(rereads()) == 2 and rereads(), "both reads in the session log")
    by_first = sorted(kept, key=lambda e: e["lines"][0][0])
    assert [n for n, _ in by_first[0]["lines"]] == [line.number for line in first.lines]
    assert by_first[1]["lines"] == [[line.number, line.text] for line in second.lines]
    assert {e["job_id"] for e in kept} == {result.job_id}
    assert {e["output_ref"] for e in kept} == {ref}
    assert by_first[1]["grep"] == "filler line for a long listing 399"
    written = path.read_text(encoding="utf-8")
    assert [s for s in secrets if s in written] == []
    assert "[secret:" in json.dumps(by_first[0]["lines"])
