"""The docs cannot drift: the README's walkthrough and the API's curl session are typed into a
real bash, against a real redis-server, worker and API, and what they show is checked by shape;
the Python examples of the README, INTEGRATION and GATE run against a real worker; every
``tersify`` command line in the README and docs/ names only flags its command has."""

from __future__ import annotations

import argparse
import base64
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tersify.client import Producer
from tersify.contract import Queue
from tersify.settings import Settings
from tersify.worker.cli import _parser
from tersify.worker.cli.commands import COMMANDS
from tersify.worker.processes.redis_server import free_port
from tersify.worker.processes.worker_process import WorkerProcess
from tests.docsessions import (
    Outcome,
    Shell,
    Step,
    block_after,
    blocks,
    commands,
    listening,
    match_shown,
    port_of,
    session,
)
from tests.helpers import wait_for

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
WALKTHROUGH = "By hand, in five minutes"
# The walkthrough's install line is what test_light_install checks for a wheel; here the
# suite's own venv is on PATH instead of a second one built from the checkout.
INSTALL = "python3 -m venv .venv && .venv/bin/pip install -e '.[worker]'   # from this checkout"
BIN = str(Path(sys.executable).parent)


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A reader's environment: the venv and the system on PATH, a home of its own, no
    ``TERSIFY_*`` variable but ``extra``."""
    return {
        "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "LANG": "C.UTF-8",
        **extra,
    }


def waiter(redis_url: str) -> object:
    """What a reader waits for after sending a server to the background: its port open, or a
    worker's first heartbeat."""

    def ready(command: str) -> None:
        port = port_of(command)
        if "tersify worker" in command:
            with Producer(Settings(redis_url=redis_url)) as producer:
                wait_for(lambda: producer.live_workers(Queue.INTERACTIVE), "a live worker", 120)
        elif port is not None:
            wait_for(lambda: listening(port), f"{command!r} listening", 120)

    return ready


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[list[Shell]]:
    """Shells made by the test, closed (their background jobs stopped) at its end."""
    made: list[Shell] = []
    yield made
    for each in made:
        each.close()


def test_the_readme_walkthrough_runs_as_written_and_prints_what_it_shows(
    tmp_path: Path, shell: list[Shell]
) -> None:
    steps = commands(block_after(README, WALKTHROUGH).text)
    assert steps[0].command == INSTALL
    redis_port = free_port()
    env = clean_env(tmp_path)
    run = Shell(tmp_path, env, {6390: redis_port})
    shell.append(run)
    ready = waiter(f"redis://127.0.0.1:{redis_port}/0")
    outcomes = [run.run(step, ready) for step in steps[1:]]  # type: ignore[arg-type]
    for outcome in outcomes:
        assert outcome.code in (None, 0), _failed(outcome)
    doctor = next(o for o in outcomes if o.step.command.startswith("tersify doctor"))
    assert str(redis_port) in doctor.stdout + doctor.stderr  # the walkthrough's own Redis
    submitted = outcomes[-1]
    assert "step 4000: error: disk full" in submitted.stdout
    shown = block_after(README, WALKTHROUGH, language="").text.splitlines()
    assert match_shown(shown, submitted.stderr, run.ids) is None, submitted.stderr


def test_the_api_curl_session_runs_as_written_and_answers_what_it_shows(
    tmp_path: Path, settings: Settings, shell: list[Shell]
) -> None:
    api_doc = (ROOT / "docs" / "API.md").read_text()
    steps = session(block_after(api_doc, "A curl session").text)
    make_log = next(
        s for s in commands(block_after(README, WALKTHROUGH).text) if "seq" in s.command
    )
    # the session shows the gate closed while no worker runs: on a loaded machine the worker
    # may take longer to start than the default 15 s hold, so the hold lasts to its cap here
    env = clean_env(tmp_path, TERSIFY_REDIS_URL=settings.redis_url, TERSIFY_GATE_LEASE_SECONDS="60")
    run = Shell(tmp_path, env, {8080: free_port()})
    shell.append(run)
    ready = waiter(settings.redis_url)
    assert run.run(make_log, ready).code == 0  # type: ignore[arg-type]
    for step in steps:
        outcome = run.run(step, ready)  # type: ignore[arg-type]
        assert outcome.code in (None, 0), _failed(outcome)
        if step.shown:
            assert match_shown(step.shown, outcome.stdout, run.ids) is None, _failed(outcome)


def _failed(outcome: Outcome) -> str:
    return (
        f"{outcome.step.command!r} exited {outcome.code}\nstdout: {outcome.stdout[-2000:]}\n"
        f"stderr: {outcome.stderr[-2000:]}"
    )


def documented_command_lines() -> list[tuple[str, str]]:
    """Every ``tersify`` command line in the README's and docs' shell blocks, with its file."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in blocks(path.read_text()):
            if block.language not in ("sh", "bash", "console"):
                continue
            for line in block.text.splitlines():
                words = line.removeprefix("$ ").split(" # ")[0].split()
                while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value tersify …
                    words.pop(0)
                if len(words) >= 2 and words[0] == "tersify" and words[1] in COMMANDS:
                    found.append((path.name, " ".join(words)))
    return found


def helps(command: str) -> str:
    """``tersify COMMAND --help`` and the help of each of its subcommands, as text."""
    parser = _parser(command)
    texts = []
    pending = [_choices(parser)[command]]
    while pending:
        current = pending.pop()
        texts.append(current.format_help())
        pending.extend(_choices(current).values())
    return "\n".join(texts)


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_documented_tersify_command_line_names_only_flags_it_has() -> None:
    lines = documented_command_lines()
    assert len(lines) > 30
    known: dict[str, str] = {}
    wrong = []
    for name, line in lines:
        command = line.split()[1]
        text = known.setdefault(command, helps(command))
        for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*", line.split(" -- ")[0]):
            if flag not in text:
                wrong.append(f"{name}: {line!r} ({flag})")
    assert not wrong, "\n".join(wrong)


def test_the_runner_matches_by_shape_and_refuses_a_drifted_output() -> None:
    ids: dict[str, str] = {}
    shown = ["# job 5f0c… · CommandOutput · extractive · 48,911 → 1,992 chars"]
    real = "# job 0a1b2c3d4e · CommandOutput · extractive · 12,345 → 678 chars\n"
    assert match_shown(shown, real, ids) is None and ids == {"5f0c…": "0a1b2c3d4e"}
    drifted = "# job 0a1b2c3d4e · CommandOutput · extractive · 12,345 chars\n"
    assert match_shown(shown, drifted, {}) is not None
    run = Shell.__new__(Shell)  # its command rewriting alone: no bash started
    run.ports, run.ids = {8080: 40123}, ids
    assert run.typed("curl localhost:8080/v1/summaries/5f0c…") == (
        "curl localhost:40123/v1/summaries/0a1b2c3d4e"
    )
    assert session("$ a \\\n    b\nout\n# note\n$ c")[0] == Step("a \\\n    b", ["out"])


PYTHON_EXAMPLES = [
    ("README.md", "Five ways in"),
    ("docs/INTEGRATION.md", "2. The Python producer: a backend you write"),
    ("docs/GATE.md", "Using it from a backend"),
]


@pytest.mark.parametrize(("doc", "heading"), PYTHON_EXAMPLES, ids=[d for d, _ in PYTHON_EXAMPLES])
def test_the_docs_python_examples_run_against_a_real_worker(
    doc: str,
    heading: str,
    settings: Settings,
    start_worker: Callable[..., WorkerProcess],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    start_worker()  # no webhook secret: a callback the example names is queued, never sent
    monkeypatch.setenv("TERSIFY_REDIS_URL", settings.redis_url)
    monkeypatch.setenv("TERSIFY_WEBHOOK_ALLOWED_URLS", "https://hooks.example.com/")
    monkeypatch.setenv("TERSIFY_WEBHOOK_SECRET", "whsec_" + base64.b64encode(b"k" * 32).decode())
    example = block_after((ROOT / doc).read_text(), heading, language="python").text
    log_text = "".join(f"tests/test_{i}.py::test_case PASSED\n" for i in range(300))
    log_text += "tests/test_zip.py::test_crc FAILED\n"
    namespace: dict[str, object] = {"log_text": log_text}
    exec(compile(example, f"{doc} ({heading})", "exec"), namespace)  # noqa: S102 - the docs' code
    printed = capsys.readouterr().out
    if "on_user_input" in namespace:  # the gate example defines what a backend calls
        on_user_input = namespace["on_user_input"]
        assert callable(on_user_input) and on_user_input("sess-42", "hi") == ["hi"]
    else:
        assert printed.startswith("extractive "), printed
        assert "test_crc FAILED" in printed
