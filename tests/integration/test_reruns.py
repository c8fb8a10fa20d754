"""A command run again in a session, through a real worker and Redis: summarized as what changed
since its earlier run, without a model and with the fake one."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import redis

from tersify.client import Producer
from tersify.contract import Method, SummaryResult
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, answer
from tests.integration.conftest import provider_env
from tests.runlogs import at, runner_log

StartWorker = Callable[..., WorkerProcess]
WAIT = 60.0
COMMAND = "python -m pytest tests/ -p no:cacheprovider"


def run(producer: Producer, output: str, session: str = "work", **fields: object) -> SummaryResult:
    """Submit one run of the command and wait for its summary."""
    fields.setdefault("command", COMMAND)
    handle = producer.submit(session_id=session, tool_name="Bash", output=output, **fields)
    return handle.wait(WAIT)


def test_a_command_run_again_is_told_as_what_changed_since_its_earlier_run(
    start_worker: StartWorker, producer: Producer
) -> None:
    start_worker()
    first = run(producer, runner_log([3, 17, 40], 1.23))
    assert first.rerun_of is None and first.method is Method.EXTRACTIVE
    log = runner_log([17, 40, 52], 0.98)
    second = run(producer, log, command=COMMAND + " --randomly-seed=7")
    assert second.rerun_of == first.output_ref
    lines = second.text.split("\n")
    assert lines[0] == f"same as run 1 (ref {first.output_ref}), except:"
    new = "FAILED tests/test_part52.py::test_case_52 - assert 104 == 53"
    assert f"+ {at(log, new)}| {new}" in lines
    assert "- FAILED tests/test_part03.py::test_case_3 - assert 6 == 4" in lines
    assert "E       assert 104 == 53" in second.text
    assert second.chars_out < first.chars_out * 0.6
    # the full output of either run is still read by its ref
    earlier = producer.read_output(first.output_ref, grep="test_case_3 -")
    assert "FAILED tests/test_part03.py::test_case_3 - assert 6 == 4" in earlier.text
    third = run(producer, runner_log([17, 40, 52], 2.5))
    assert third.text.startswith(f"same as run 2 (ref {second.output_ref}): every line alike")
    assert "still as in run 2: 9 failure or error lines" in third.text


def test_another_command_or_another_session_is_summarized_on_its_own(
    start_worker: StartWorker, producer: Producer
) -> None:
    start_worker()
    first = run(producer, runner_log([3]))
    other = run(producer, runner_log([3, 4]), command="python -m pytest tests/test_part03.py")
    elsewhere = run(producer, runner_log([3, 4]), session="another")
    assert first.rerun_of is None and other.rerun_of is None and elsewhere.rerun_of is None
    again = run(producer, runner_log([4]))
    assert again.rerun_of == first.output_ref


def test_a_job_can_turn_it_off_and_the_runs_still_count(
    start_worker: StartWorker, producer: Producer
) -> None:
    start_worker()
    run(producer, runner_log([3]))
    off = run(producer, runner_log([4]), options={"rerun": False})
    assert off.rerun_of is None and not off.text.startswith("same as")
    on = run(producer, runner_log([5]))
    assert on.rerun_of == off.output_ref
    assert on.text.startswith(f"same as run 2 (ref {off.output_ref}), except:")


def test_the_earlier_run_must_be_among_the_sessions_latest_runs(
    settings: Settings, start_worker: StartWorker
) -> None:
    start_worker(rerun_window="2")
    with Producer(settings) as producer:
        first = run(producer, runner_log([3]))
        run(producer, runner_log([1]), command="make check")
        near = run(producer, runner_log([4]))
        assert near.rerun_of == first.output_ref
        run(producer, runner_log([1]), command="make check")
        run(producer, runner_log([1]), command="make lint")
        far = run(producer, runner_log([5]))
        assert far.rerun_of is None


def test_forgetting_a_session_forgets_its_runs(
    start_worker: StartWorker, producer: Producer, redis_client: redis.Redis
) -> None:
    start_worker()
    run(producer, runner_log([3]))
    assert redis_client.llen(keys.session_runs("work")) == 1
    producer.forget("work")
    assert not redis_client.exists(keys.session_runs("work"))
    assert run(producer, runner_log([4])).rerun_of is None


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_model_reads_the_earlier_summary_and_the_lines_that_differ(
    provider: str, fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    start_worker(**provider_env(fake_model, provider))
    said = " ".join(["Three of the tests fail, each on an assertion about compute."] * 8)
    fake_model.set_default(answer({"summary": said, "quotes": ["67-81", "82-87"]}))
    first = run(producer, runner_log([3, 17, 40]))
    assert first.method is Method.LLM and first.text.startswith(said)
    fake_model.reset()
    prose = "test_case_3 passes now; test_case_52 and test_case_53 fail; ten modules skip."
    # many lines differ: more than a change summary shows whole, so the model is asked
    log = runner_log([17, 40, 52, 53], seconds=3.0, skipped=range(20, 30))
    quoted, unquoted = (
        f"FAILED tests/test_part{n}.py::test_case_{n} - assert {2 * n} == {n + 1}" for n in (52, 53)
    )
    fake_model.set_default(answer({"summary": prose, "quotes": [str(at(log, quoted))]}))
    second = run(producer, log)
    assert second.method is Method.LLM, second.fallback_detail
    assert second.rerun_of == first.output_ref
    lines = second.text.split("\n")
    assert lines[0] == f"same as run 1 (ref {first.output_ref}), except:"
    assert lines[1] == prose
    assert f"{at(log, quoted)}|{quoted}" in lines
    # the line the model did not quote is added: a new failure is never left out
    assert f"+ {at(log, unquoted)}| {unquoted}" in lines
    (sent,) = fake_model.requests
    body = json.dumps(sent.body)
    assert said in body  # the earlier summary
    assert "previous_summary_" in body
    assert "tests/test_part01.py ......." not in body  # an unchanged line is not sent
    assert "was: tests/test_part03.py .......F" in body  # a changed line's earlier text is
