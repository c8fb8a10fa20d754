"""The asyncio twin of the producer: same contract, same gate, same results."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from tersify.client import AsyncProducer
from tersify.contract import Method
from tersify.errors import JobNotFoundError, ResultTimeoutError
from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess

LOG = "\n".join(f"step {i}: ok" for i in range(300)) + "\nERROR: disk quota exceeded\n"


def test_the_async_producer_submits_waits_and_sees_the_gate(
    start_worker: Callable[..., WorkerProcess], settings: Settings
) -> None:
    start_worker()

    async def scenario() -> None:
        async with AsyncProducer(settings) as producer:
            short = await producer.submit(session_id="a1", tool_name="bash", output="fine\n")
            assert (await short.wait(1)).method is Method.PASSTHROUGH
            handle = await producer.submit(session_id="a1", tool_name="bash", output=LOG)
            assert await producer.gate.wait_open("a1", timeout=30)
            result = await handle.wait(30)
            assert result.method is Method.EXTRACTIVE
            assert "ERROR: disk quota exceeded" in result.text
            assert await producer.get(handle.job_id) == result

    asyncio.run(scenario())


def test_the_async_producer_reports_unknown_and_late_jobs_with_typed_errors(
    settings: Settings,
) -> None:
    async def scenario() -> None:
        async with AsyncProducer(settings) as producer:
            with pytest.raises(JobNotFoundError):
                await producer.get("f" * 32)
            handle = await producer.submit(session_id="a2", tool_name="bash", output=LOG)
            assert not await producer.gate.is_open("a2")  # no worker: the job waits, gated
            with pytest.raises(ResultTimeoutError):
                await handle.wait(0.3)
            assert await handle.result() is None

    asyncio.run(scenario())
