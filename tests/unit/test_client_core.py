"""The client core: each operation written once, driven step by step by either face."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from tersify.client import submission
from tersify.client.core import (
    Compute,
    GateScript,
    Operation,
    Round,
    Step,
    run_async,
    run_sync,
)
from tersify.client.results import get
from tersify.errors import InvalidJobError, JobNotFoundError, RedisUnavailableError
from tersify.gate.protocol import GateCalls
from tersify.settings import Settings
from tersify.store.wire import parse_message

SETTINGS = Settings()
OUTPUT = "".join(f"line {i}: something happened\n" for i in range(200))


class Script:
    """Performs steps from a script of answers (a value, or an exception to raise), in order."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.steps: list[Step] = []

    def __call__(self, step: Step) -> Any:
        if isinstance(step, Compute):  # pure CPU work: done, not scripted or recorded
            return step.function(*step.args)
        self.steps.append(step)
        answer = self.answers.pop(0)
        if callable(answer) and isinstance(step, GateScript):
            return answer(step.call)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def awaited(self, step: Step) -> Any:
        await asyncio.sleep(0)
        return self(step)


def enqueue_of(job_id: str) -> Operation[Any]:
    fields: submission.Submission = {
        "session_id": "s1",
        "tool_name": "bash",
        "output": OUTPUT,
        "job_id": job_id,
    }
    return submission.submit(SETTINGS, GateCalls(SETTINGS), fields)


def test_a_failed_publish_reopens_the_gate_and_removes_the_job_record_then_raises() -> None:
    failure = RedisUnavailableError("could not publish")
    script = Script(7, failure, 1, [1])
    with pytest.raises(RedisUnavailableError, match="could not publish"):
        run_sync(enqueue_of("job-0001"), script)
    kinds = [type(step).__name__ for step in script.steps]
    assert kinds == ["GateScript", "Round", "GateScript", "Round"]
    store, publish, release, delete = script.steps
    assert isinstance(store, GateScript) and store.call.operation == "enqueue"
    assert isinstance(publish, Round) and publish.commands[0][0] == "lpush"
    assert isinstance(release, GateScript) and release.call.operation == "release"
    assert release.call.args[:3] == ("s1", "job-0001", 7)  # the token the close handed out
    assert isinstance(delete, Round) and delete.commands[0][0] == "delete"


def test_an_undo_that_meets_a_dead_redis_still_raises_the_first_failure() -> None:
    script = Script(7, KeyboardInterrupt(), RedisUnavailableError("x"))
    with pytest.raises(KeyboardInterrupt):
        run_sync(enqueue_of("job-0002"), script)
    assert len(script.steps) == 3  # the release failed; nothing more was tried


def test_both_faces_run_the_same_steps_and_get_the_same_result() -> None:
    blocking = Script(3, [1])
    awaited = Script(3, [1])
    job, result = run_sync(enqueue_of("job-0003"), blocking)
    job2, result2 = asyncio.run(run_async(enqueue_of("job-0003"), awaited.awaited))
    assert (job.job_id, result) == (job2.job_id, result2) == ("job-0003", None)
    assert [type(s) for s in blocking.steps] == [type(s) for s in awaited.steps]
    publish = blocking.steps[-1]
    assert isinstance(publish, Round)
    (name, (queue, entry), _) = publish.commands[0]
    assert (name, queue) == ("lpush", "interactive")
    assert (
        parse_message(json.loads(base64.b64decode(json.loads(entry)["body"]))[0][0]).gate_token == 3
    )


def test_a_job_whose_id_another_session_owns_is_refused_and_nothing_is_published() -> None:
    script = Script()
    script.answers = [lambda call: call.parse(-1)]  # what the script replies when it refused
    with pytest.raises(InvalidJobError, match="belongs to another session"):
        run_sync(enqueue_of("job-0004"), script)
    assert len(script.steps) == 1


def test_a_short_output_is_handed_back_even_when_its_log_entry_cannot_be_stored() -> None:
    fields: submission.Submission = {"session_id": "s1", "tool_name": "bash", "output": "ok"}
    script = Script(RedisUnavailableError("down"))
    _, result = run_sync(submission.submit(SETTINGS, GateCalls(SETTINGS), fields), script)
    assert result is not None and result.text == "ok"


def test_an_unknown_job_reads_as_not_found_and_a_running_one_as_none() -> None:
    with pytest.raises(JobNotFoundError):
        run_sync(get("job-0005"), Script([None, 0]))
    assert run_sync(get("job-0005"), Script([None, 1])) is None
