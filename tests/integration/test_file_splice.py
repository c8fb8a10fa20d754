"""A file's relevant range reaches the agent verbatim, spliced between the model's summaries of
what comes before and after it with the lines the model quotes, through either wire format."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tersify.client import Producer
from tersify.contract import LineRange, Method, ToolType
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.shrink.hashlines import hashline
from tests.fakemodel import FakeModelServer, answer
from tests.integration.conftest import provider_env

SOURCE = [f"def helper_{i}(value):\n    return value + {i}\n" for i in range(150)]
LINES = "".join(SOURCE).splitlines()
ANSWER = {
    "before": "Imports nothing; helpers helper_0 to helper_48.",
    "after": "More helpers follow.",
    "quotes": ["1-2"],
    "needs_full_output": False,
}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_relevant_range_is_spliced_verbatim_between_the_two_summaries(
    provider: str,
    fake_model: FakeModelServer,
    start_worker: Callable[..., WorkerProcess],
    producer: Producer,
) -> None:
    fake_model.set_default(answer(ANSWER))
    start_worker(**provider_env(fake_model, provider))
    handle = producer.submit(
        session_id=f"splice-{provider}",
        tool_name="read",
        command="src/helpers.py",
        output="\n".join(LINES),
        relevant_lines=LineRange(start=99, end=104),
    )
    result = handle.wait(30)
    assert result.method is Method.LLM and result.tool_type is ToolType.FILE_CONTENT
    quoted = [hashline(n, LINES[n - 1]) for n in (1, 2)]
    verbatim = [hashline(n, LINES[n - 1]) for n in range(99, 105)]
    assert result.text == "\n".join(
        [
            "Imports nothing; helpers helper_0 to helper_48.",
            *quoted,
            "… 96 lines …",
            *verbatim,
            "More helpers follow.",
        ]
    )
    (request,) = fake_model.requests
    prompt = str(request.body)
    assert '"before"' in prompt and '"after"' in prompt
    assert hashline(99, LINES[98]) in prompt  # the model saw the range it must not repeat
