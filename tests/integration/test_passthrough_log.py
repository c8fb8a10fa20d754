"""Every output reaches the session log once: passthroughs too, though no job carries them."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable

from tersify.client import AsyncProducer, Producer
from tersify.contract import Method
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.store.sessionlog import session_file
from tests.helpers import wait_for

LONG = "\n".join(f"step {i}: compiled" for i in range(300)) + "\nerror: link failed\n"


def lines(settings: Settings, session: str) -> Counter[tuple[str, str]]:
    """How many raw lines of each ``(kind, job_id)`` a session's log holds."""
    path = session_file(settings.session_log_dir, session)
    if not path.exists():
        return Counter()
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return Counter((e["kind"], e["job_id"]) for e in entries)


def logged_once(settings: Settings, expected: dict[str, list[str]]) -> bool:
    """True when each session's log holds each job's output and result exactly once."""
    for session, job_ids in expected.items():
        counts = lines(settings, session)
        want = {(kind, j): 1 for j in job_ids for kind in ("output", "result")}
        if dict(counts) != want:
            return False
    return True


def test_passthrough_outputs_from_both_producers_are_logged_once_beside_jobs(
    start_worker: Callable[..., WorkerProcess], settings: Settings, producer: Producer, redis_client
) -> None:
    start_worker()
    short = [
        producer.submit(session_id="pt-a", tool_name="bash", output=f"ok {n}\n") for n in range(4)
    ]
    job = producer.submit(session_id="pt-a", tool_name="bash", output=LONG)
    assert job.wait(30).method is not Method.PASSTHROUGH

    async def async_short() -> list[str]:
        async with AsyncProducer(settings) as aio:
            handles = [
                await aio.submit(session_id="pt-b", tool_name="cat", output=f"tiny {n}")
                for n in range(3)
            ]
            return [h.job_id for h in handles]

    async_ids = asyncio.run(async_short())
    assert all(h.result().method is Method.PASSTHROUGH for h in short)  # type: ignore[union-attr]
    expected = {"pt-a": [h.job_id for h in short] + [job.job_id], "pt-b": async_ids}
    wait_for(lambda: logged_once(settings, expected), "every output logged once", timeout=20)
    assert redis_client.llen(keys.PASSTHROUGH_LOG) == 0
    assert redis_client.zcard(keys.PASSTHROUGH_LOGGING) == 0


def test_passthroughs_wait_for_a_worker_and_a_dead_workers_batch_is_written_again(
    start_worker: Callable[..., WorkerProcess], settings: Settings, producer: Producer, redis_client
) -> None:
    waiting = [
        producer.submit(session_id="pt-c", tool_name="bash", output=f"early {n}") for n in range(3)
    ]
    assert redis_client.llen(keys.PASSTHROUGH_LOG) == 3
    # a batch a worker took and died with: in flight since long ago
    orphan = producer.submit(session_id="pt-c", tool_name="bash", output="orphaned")
    entry = redis_client.lpop(keys.PASSTHROUGH_LOG)
    redis_client.zadd(keys.PASSTHROUGH_LOGGING, {entry: 1})
    start_worker()
    expected = {"pt-c": [h.job_id for h in waiting] + [orphan.job_id]}
    wait_for(lambda: logged_once(settings, expected), "waiting and orphaned outputs", timeout=20)
    assert redis_client.zcard(keys.PASSTHROUGH_LOGGING) == 0


def test_an_entry_that_is_not_a_passthrough_record_is_dropped_and_the_rest_are_logged(
    start_worker: Callable[..., WorkerProcess], settings: Settings, producer: Producer, redis_client
) -> None:
    for job_id, entry in (("bad-1", "not a record"), ("bad-2", json.dumps({"job": {}}))):
        redis_client.set(keys.passthrough_entry(job_id), entry)
        redis_client.lpush(keys.PASSTHROUGH_LOG, job_id)
    good = producer.submit(session_id="pt-d", tool_name="bash", output="fine")
    worker = start_worker()
    wait_for(lambda: logged_once(settings, {"pt-d": [good.job_id]}), "the good one", timeout=20)
    assert redis_client.llen(keys.PASSTHROUGH_LOG) == 0
    wait_for(lambda: "passthrough_log_entry_invalid" in worker.log(), "the refusals logged")
