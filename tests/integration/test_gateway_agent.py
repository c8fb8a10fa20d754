"""A real agent through the gateway: Claude Code (npm, ``make agents``) runs its Bash tool on a
large output, and its next request reaches the model with the summary in its place.

The fake model plays the model on loopback: asked the task, it calls Bash (``cat`` of a 24 KB
log); asked again with that call's result, it answers. Claude Code streams both requests to
``/v1/messages?beta=true`` with its own session id in ``x-claude-code-session-id``.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, ok, tool_call
from tests.helpers import tersify
from tests.integration.gateway import BIG_LOG, Gateway, model_requests

CLAUDE = (
    Path(__file__).resolve().parents[2] / "build" / "agents" / "node_modules" / ".bin" / "claude"
)
TASK = "RUN-THE-LOG: why does the build fail?"


def run_claude(gateway: Gateway, workdir: Path) -> subprocess.CompletedProcess[str]:
    """``claude -p TASK`` against the gateway: Bash allowed, nothing but loopback reached."""
    assert CLAUDE.exists(), f"{CLAUDE} is missing: run `make agents` (make check does)"
    home = workdir / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "ANTHROPIC_BASE_URL": gateway.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-claude-code",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    argv = [str(CLAUDE), "-p", TASK, "--bare", "--max-turns", "3", "--allowedTools", "Bash"]
    return subprocess.run(
        [*argv, "--output-format", "json"],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.slow
def test_claude_code_runs_bash_on_a_large_output_and_its_next_request_carries_the_summary(
    settings: Settings,
    start_worker: Callable[..., WorkerProcess],
    start_gateway: Callable[..., Gateway],
    fake_model: FakeModelServer,
    tmp_path: Path,
) -> None:
    start_worker()
    gateway = start_gateway()
    log = tmp_path / "build.log"
    log.write_text(BIG_LOG)
    fake_model.add_rule("toolu_fake", ok("All done."))  # the call's id: the second request
    fake_model.add_rule("RUN-THE-LOG", tool_call("Bash", {"command": f"cat {log}"}))

    finished = run_claude(gateway, tmp_path)

    assert finished.returncode == 0, finished.stderr[-2000:]
    assert json.loads(finished.stdout)["result"] == "All done."
    # the first request that carried the task, and the one after the Bash call (Claude Code may
    # send others between them: a retry of a request the fake refused as the API would)
    requests = model_requests(fake_model)
    asked, answered = requests[0], requests[-1]
    assert asked.target == answered.target == "/v1/messages?beta=true"
    assert asked.body["stream"] is True
    (result,) = [
        block
        for message in answered.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    text = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert len(text) < len(BIG_LOG) / 4
    assert BIG_LOG[2000:3000] not in answered.raw.decode()  # the full log never reached the model
    ref = re.search(r"tersify output ([0-9a-f]{32}) --grep TEXT", text)
    assert ref is not None, text
    session = answered.headers["x-claude-code-session-id"]
    assert f'"session_id": "{session}"' in gateway.process.log()
    # what the agent's shell gets back when it follows the summary's advice
    read = tersify(settings, "output", ref.group(1), "--grep", "FAILED")
    assert read.stdout.splitlines() == [
        f"{n:>3}\t{line}" for n, line in enumerate(BIG_LOG.splitlines(), 1) if "FAILED" in line
    ]
