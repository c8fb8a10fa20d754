"""Model summaries that quote by line number, through real workers and either wire format: the
lines come back exactly; bad ranges are refused and sent back once; a malformed answer falls
back."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tersify.client import Producer
from tersify.contract import FallbackReason, Method
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, answer, verbatim
from tests.integration.conftest import provider_env

StartWorker = Callable[..., WorkerProcess]
LOG = [f"PASSED tests/test_api.py::test_endpoint_{n}" for n in range(1, 401)]
LOG[249] = "FAILED tests/test_api.py::test_refund - AssertionError: 402 != 200"
LOG.append("==== 1 failed, 399 passed in 8.02s ====")
OUTPUT = "\n".join(LOG)
# Small enough that the engine cuts the log: the model is not shown most passing lines.
ENV = {
    "model_window_chars": "4000",
    "model_read_max_chars": "4000",
    "model_retry_base_seconds": "0",
}


def summary(*spans: tuple[int, int]) -> dict[str, object]:
    quotes = [f"{a}-{b}" for a, b in spans]
    return {"summary": "1 of 400 tests fails: test_refund.", "quotes": quotes}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_bad_ranges_are_refused_and_retried_and_the_good_lines_come_back_exactly(
    provider: str,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
) -> None:
    start_worker(**provider_env(fake_model, provider), **ENV)
    bad = {"out of bounds": (402, 403), "overlapping": (250, 250), "unseen": (120, 121)}
    says = {
        "out of bounds": "quote 1 (402-403): the output has no such line",
        "overlapping": "quotes 1 and 2 overlap",
        "unseen": "quote 1 (120-121): line 120 was not shown to you",
    }
    results = {}
    for name, span in bad.items():
        fake_model.reset()
        first = summary(span) if name != "overlapping" else summary(span, span)
        fake_model.script([answer(first), answer(summary((250, 250), (401, 401)))])
        handle = producer.submit(
            session_id=f"quotes-{provider}-{name.replace(' ', '-')}",
            tool_name="bash",
            command="pytest",
            output=f"{OUTPUT}\n{name}",  # one output per case: the cache must not answer
        )
        result = handle.wait(30)
        results[name] = (result, [json.dumps(r.body) for r in fake_model.requests])
    for name, (result, bodies) in results.items():
        assert result.method is Method.LLM, (name, result.fallback_detail)
        assert len(bodies) == 2 and says[name] in bodies[1], name
        assert result.text == "\n".join(
            [
                "1 of 400 tests fails: test_refund.",
                f"250|{LOG[249]}",
                "… 150 lines …",
                f"401|{LOG[400]}",
            ]
        )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_malformed_answer_is_retried_once_and_then_falls_back(
    provider: str,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
) -> None:
    start_worker(**provider_env(fake_model, provider), **ENV)
    fake_model.set_default(verbatim("I could not produce JSON, sorry."))
    result = producer.submit(session_id=f"bad-{provider}", tool_name="bash", output=OUTPUT).wait(30)
    assert (result.method, result.fallback_reason) == (Method.FALLBACK, FallbackReason.MALFORMED)
    assert fake_model.request_count == 2
    assert LOG[249] in result.text  # the fallback keeps the failure line
