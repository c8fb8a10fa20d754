"""What the previous layout left in Redis stays readable and forgettable after an upgrade, and a
job an older producer queued is finished once (docs/DEPLOY.md, "Upgrading to the session hash").

The previous layout is written here by hand, command by command, as that version wrote it: a
job's record as a hash, a ``started`` marker, payloads without an owner and their users' set, a
session's index as three sets, an output link as a hash, the gate's holds in per-session keys.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import redis

from tersify.client import Producer
from tersify.client.jobs import build_job
from tersify.contract import Method, PendingSummary, Queue, SummaryResult, ToolType, utcnow
from tersify.settings import Settings
from tersify.store import keys, payloads
from tersify.store.commands import execute
from tersify.store.publisher import push
from tersify.store.wire import SUMMARIZE_TASK
from tersify.worker.processes.worker_process import WorkerProcess
from tests.helpers import wait_for
from tests.integration.test_forget import traces

StartWorker = Callable[..., WorkerProcess]
OUTPUT = "".join(f"{i:04d} ERROR request {i} failed after {i % 13} retries\n" for i in range(400))


def old_job(
    client: redis.Redis, settings: Settings, sid: str, output: str = OUTPUT, **fields: Any
) -> tuple[PendingSummary, str]:
    """A job stored as the previous version stored it (no gate hold); the job and its digest."""
    job = build_job(settings, session_id=sid, tool_name="bash", output=output, **fields)
    digest, blob = payloads.encode(job.output)  # no owner: the previous form
    meta = {
        "session_id": sid,
        "tool_name": job.tool_name,
        "queue": job.queue.value,
        "payload": digest,
        "tool_type": ToolType.COMMAND_OUTPUT.value,
        "job": job.model_dump_json(exclude={"output"}),
        "chars": str(len(job.output)),
        "queued_at": job.created_at.isoformat(),
        "deadline": job.deadline.isoformat(),
    }
    assert job.output_ref is not None
    link = {"session_id": sid, "payload": digest, "job_id": job.job_id, "tool_type": "x"}
    with client.pipeline(transaction=False) as pipe:
        pipe.set(keys.payload(digest), blob, ex=600)
        pipe.sadd(keys.payload_sessions(digest), sid)
        pipe.hset(keys.job_meta(job.job_id), mapping=meta)
        pipe.hset(keys.output(job.output_ref), mapping=link)
        pipe.sadd(keys.session_jobs(sid), job.job_id)
        pipe.sadd(keys.session_payloads(sid), digest)
        pipe.sadd(keys.session_keys(sid), keys.output(job.output_ref))
        for key in (keys.session_jobs, keys.session_payloads, keys.session_keys):
            pipe.expire(key(sid), 600)
        pipe.expire(keys.job_meta(job.job_id), 600)
        pipe.expire(keys.output(job.output_ref), 600)
        pipe.execute()
    return job, digest


def old_result(client: redis.Redis, job: PendingSummary) -> SummaryResult:
    """The result the previous version stored for ``job``, with its ``started`` marker."""
    now = utcnow()
    result = SummaryResult(
        job_id=job.job_id,
        session_id=job.session_id,
        text="stored before the upgrade",
        method=Method.FALLBACK,
        tool_type=ToolType.COMMAND_OUTPUT,
        chars_in=len(job.output),
        chars_out=25,
        queued_at=job.created_at,
        started_at=now,
        finished_at=now,
        output_ref=job.output_ref,
    )
    client.rpush(keys.result(job.job_id), result.model_dump_json())
    client.set(keys.started(job.job_id), "1", ex=600)
    return result


def publish_v2(client: redis.Redis, job: PendingSummary, digest: str) -> None:
    """Queue ``job`` as a producer of message version 2 did."""
    message = {
        "schema_version": 2,
        "job": job.model_dump(mode="json", exclude={"output"}),
        "tool_type": ToolType.COMMAND_OUTPUT.value,
        "payload": digest,
        "gate_token": None,
    }
    execute(client, push(SUMMARIZE_TASK, message, job.queue, job.job_id))


def test_what_the_previous_layout_stored_is_read_by_every_reader(
    producer: Producer, settings: Settings
) -> None:
    raw = redis.Redis.from_url(settings.redis_url)
    done, _ = old_job(raw, settings, "old-s")
    stored = old_result(raw, done)
    queued, _ = old_job(raw, settings, "old-s", output=OUTPUT + "one more line\n")
    assert producer.get(done.job_id) == stored
    assert producer.get(queued.job_id) is None  # known, not finished
    assert producer.job_queue(queued.job_id) is Queue.INTERACTIVE
    assert producer.job_session(queued.job_id) == "old-s"
    assert producer.job_started(done.job_id) and not producer.job_started(queued.job_id)
    assert queued.output_ref is not None
    lines = producer.read_output(queued.output_ref, 399, 2)
    assert lines.text == "0399 ERROR request 399 failed after 9 retries\none more line"
    cancelled = producer.cancel(queued.job_id)
    assert (cancelled.state, cancelled.result.fallback_reason) == ("queued", "cancelled")
    raw.close()


def test_forgetting_a_session_of_the_previous_layout_leaves_nothing_and_keeps_shared_outputs(
    producer: Producer, settings: Settings, redis_client: redis.Redis
) -> None:
    raw = redis.Redis.from_url(settings.redis_url)
    doomed, digest = old_job(raw, settings, "old-doomed")
    old_result(raw, doomed)
    kept, same = old_job(raw, settings, "old-kept")  # the same output, another session
    assert same == digest
    new = producer.submit(session_id="old-doomed", tool_name="bash", output=OUTPUT + "new\n")
    report = producer.forget("old-doomed")
    assert report.jobs == 2
    left = traces(redis_client, {"old-doomed", doomed.job_id, new.job_id})
    # the new job's message still waits in its queue (no worker runs): forgetting leaves queues
    assert [key for key in left if key != "interactive"] == [keys.forgotten("old-doomed")]
    assert kept.output_ref is not None
    assert producer.read_output(kept.output_ref, 0, 1).text.startswith("0000 ERROR")
    raw.close()


def test_a_job_an_older_producer_queued_is_finished_once_by_a_new_worker(
    start_worker: StartWorker, producer: Producer, settings: Settings, redis_client: redis.Redis
) -> None:
    raw = redis.Redis.from_url(settings.redis_url)
    fresh, digest = old_job(raw, settings, "old-w")
    publish_v2(raw, fresh, digest)
    # a job the previous version already finished, whose message came back (an ack it lost)
    finished, finished_digest = old_job(raw, settings, "old-w", output=OUTPUT + "again\n")
    stored = old_result(raw, finished)
    publish_v2(raw, finished, finished_digest)
    start_worker()
    result = producer.wait(fresh.job_id, timeout=60)
    assert result.job_id == fresh.job_id and result.method is not Method.FALLBACK
    taken = keys.job_state(finished.job_id)
    wait_for(lambda: redis_client.exists(taken), "the finished job's message taken", 30)
    assert redis_client.get(taken) == "D"  # a second redelivery is skipped too
    assert producer.get(finished.job_id) == stored
    assert redis_client.llen(keys.result(finished.job_id)) == 1
    assert not redis_client.exists(keys.late_result(finished.job_id))
    assert json.loads(redis_client.lindex(keys.result(fresh.job_id), 0))["job_id"] == fresh.job_id
    raw.close()
