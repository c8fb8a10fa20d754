"""``tersify savings`` and ``tersify status`` never die on what they read: odd files, deep
nesting, text rich would take for markup, cells a spreadsheet would run. Each runs as the user
runs it, a process of its own, against real Redis and a real worker."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tersify.client import Producer
from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess
from tests.fakemodel import FakeModelServer, status
from tests.helpers import tersify, wait_for
from tests.integration.conftest import provider_env

StartWorker = Callable[..., WorkerProcess]
SESSION = "odd-0000-0000-0000-000000000000"
LONG = "".join(f"src/module_{n}.py:{n}: def handler_{n}(request):\n" for n in range(300))


def _user(content: Any) -> dict[str, Any]:
    message = {"role": "user", "content": content}
    return {"type": "user", "sessionId": SESSION, "isSidechain": False, "message": message}


def _assistant(message_id: str, block: dict[str, Any]) -> dict[str, Any]:
    message = {"id": message_id, "role": "assistant", "model": "m", "content": [block]}
    return {"type": "assistant", "sessionId": SESSION, "isSidechain": False, "message": message}


def claude_code_log(path: Path, tools: list[str]) -> None:
    """A Claude Code project log: one call of each tool name in ``tools``, each a long result."""
    lines: list[Any] = [_user("Look around.")]
    for n, name in enumerate(tools):
        use = {"type": "tool_use", "id": f"t{n}", "name": name, "input": {"command": "grep"}}
        lines.append(_assistant(f"msg_{n}", use))
        lines.append(_user([{"type": "tool_result", "tool_use_id": f"t{n}", "content": LONG}]))
    lines.append(_assistant("msg_end", {"type": "text", "text": "Done."}))
    text = "".join(json.dumps(line) + "\n" for line in lines)
    deep = json.dumps(_user("placeholder")).replace('"placeholder"', "[" * 100_000 + "]" * 100_000)
    path.write_text(text + deep + "\n", encoding="utf-8")


MARKUP_NAMES = ["[/bold]", "[link=https://example.invalid]click[/link]", "[red]x", "Bash"]
FORMULA_NAMES = ['=HYPERLINK("https://example.invalid","x")', "+1+1", "-2+3", "@SUM(A1)"]


def test_savings_skips_and_counts_what_it_cannot_read_and_prints_every_name_as_it_is(
    settings: Settings, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    claude_code_log(logs / "good.jsonl", MARKUP_NAMES)
    (logs / "x.json").mkdir()  # a directory with a log's name
    os.mkfifo(logs / "f.jsonl")  # nobody ever writes to it: opening it would block forever
    (logs / "d.jsonl").symlink_to(logs / "gone.jsonl")  # dangling
    (logs / "z.jsonl").symlink_to("/dev/zero")  # endless, with no newline
    (logs / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    shown = tersify(settings, "savings", str(logs), "--no-progress", timeout=120)
    assert shown.returncode == 0, shown.stderr
    for name in MARKUP_NAMES:
        assert name[:30] in shown.stdout, name
    assert "6 line(s) or file(s) skipped" in shown.stdout
    as_json = tersify(settings, "savings", str(logs), "--json", "--no-progress", timeout=120)
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    reasons = {Path(s["path"]).name: s["reason"] for s in report["skipped"]}
    assert set(reasons) == {"x.json", "f.jsonl", "d.jsonl", "z.jsonl", "deep.json", "good.jsonl"}
    assert reasons["f.jsonl"] == "a FIFO, not a file"
    assert reasons["d.jsonl"] == "a dangling link"
    assert reasons["z.jsonl"] == "a device or socket, not a file"
    assert reasons["good.jsonl"] == "nested too deep"  # its one deep line; the rest is read
    assert report["total"]["outputs"] == len(MARKUP_NAMES)


def test_savings_csv_cells_a_spreadsheet_would_run_are_written_as_text(
    settings: Settings, tmp_path: Path
) -> None:
    claude_code_log(tmp_path / "formulas.jsonl", FORMULA_NAMES)
    table = tmp_path / "rows.csv"
    done = tersify(
        settings, "savings", str(tmp_path / "formulas.jsonl"), "--csv", str(table), "--json"
    )
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(table.read_text(encoding="utf-8"))))
    assert [r["tool_name"] for r in rows] == ["'" + name for name in FORMULA_NAMES]
    assert all(not r["session"].startswith(("=", "+", "-", "@")) for r in rows)
    assert all(int(r["saved"]) == int(r["tokens_before"]) - int(r["tokens_after"]) for r in rows)


def test_status_prints_a_fallback_whose_detail_rich_would_read_as_markup(
    settings: Settings,
    start_worker: StartWorker,
    fake_model: FakeModelServer,
    producer: Producer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start_worker(**provider_env(fake_model, "anthropic"))
    detail = "[/usr/local/bin] not found [bold]"
    fake_model.script([status(400, message=detail)])
    result = producer.submit(session_id="odd-status", tool_name="bash", output=LONG).wait(30)
    assert result.fallback_detail and "[/usr/local/bin]" in result.fallback_detail
    monkeypatch.setenv("COLUMNS", "250")  # rich's width off a terminal: no cell wrapped
    shown = wait_for(lambda: _status(settings), "status printed", 30)
    assert detail in shown


def _status(settings: Settings) -> str:
    done = tersify(settings, "status")
    assert done.returncode == 0, done.stderr
    return done.stdout if "/usr/local/bin" in done.stdout else ""
